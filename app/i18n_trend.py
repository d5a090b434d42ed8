"""Strings of the trend view (/trend) and the planner page (/plan), in English and Chinese."""

from __future__ import annotations

TREND: dict[str, tuple[str, str]] = {
    "nav.trend": ("Trend", "趋势"),
    "nav.plan": ("Planner", "配置规划"),
    "trend.title": ("Sweep one knob", "扫描一个参数"),
    "trend.intro": (
        "Change one knob step by step and watch every cost move at once: the bubble shrinks "
        "as micro-batches grow, memory climbs toward the HBM line, communication takes its "
        "share. Each line is one schedule (or one value of a second knob); the base scenario "
        "is the one on the left.",
        "逐步改变一个参数，同时观察所有代价如何变化：微批越多气泡越小，显存逼近 HBM 上限，"
        "通信占去一部分时间。每条线对应一种调度（或第二个参数的一个取值）；基准场景就是左侧的设置。",
    ),
    "trend.field.knob": ("swept knob (x axis)", "扫描的参数（横轴）"),
    "trend.field.values": ("values (comma list)", "取值（逗号分隔）"),
    "trend.field.start": ("from", "起点"),
    "trend.field.stop": ("to", "终点"),
    "trend.field.step": ("step", "步长"),
    "trend.field.scale": ("range", "取值方式"),
    "trend.field.series": ("one line per", "每条线对应"),
    "trend.field.series_values": ("line values (comma list)", "各条线的取值（逗号分隔）"),
    "trend.field.open": ("click opens", "点击后打开"),
    "trend.knob.microbatches": ("micro-batches m", "微批次数 m"),
    "trend.knob.pp": ("PP stages p", "PP 阶段数 p"),
    "trend.knob.tp": ("TP shards", "TP 切分数"),
    "trend.knob.dp_fixed_global_batch": (
        "DP, global batch fixed (m = B / (DP·b))",
        "DP，全局批固定（m = B / (DP·b)）",
    ),
    "trend.knob.dp_fixed_microbatch": (
        "DP, micro-batches fixed (batch grows)",
        "DP，微批次数固定（全局批随之增大）",
    ),
    "trend.knob.virtual_stages": ("chunks per rank v", "每卡模型块数 v"),
    "trend.knob.micro_batch_size": ("micro-batch size b", "微批大小 b"),
    "trend.knob.seq_len": ("sequence length", "序列长度"),
    "trend.series.none": ("one line", "只画一条线"),
    "trend.series.schedule": ("schedule", "调度方式"),
    "trend.scale.linear": ("from–to by step", "等差（按步长）"),
    "trend.scale.doubling": ("from–to, doubling", "倍增（×2）"),
    "trend.hint": (
        "Hover a point to see it; click it to open that exact scenario. A grey × is an "
        "invalid configuration, kept in place: hover it for the reason.",
        "悬停查看某个点；点击它打开对应的具体场景。"
        "灰色 × 表示该配置无效（保留在原位），悬停可看原因。",
    ),
    "trend.summary": (
        "{n} points, {bad} invalid (grey ×)",
        "共 {n} 个点，其中 {bad} 个无效（灰色 ×）",
    ),
    "trend.invalid": ("invalid", "无效"),
    "trend.open_overview": ("open in overview", "在概览中打开"),
    "trend.open_flow": ("open in flow", "在流程视图中打开"),
    "trend.panel.none": ("Hover or click a point.", "悬停或点击一个点。"),
    "trend.oom": ("out of memory", "显存不足"),
    "trend.chart.bubble": ("Pipeline bubble", "流水线气泡"),
    "trend.chart.memory": ("Peak memory per GPU", "每卡峰值显存"),
    "trend.chart.time": ("Predicted step time", "预测的单步时间"),
    "trend.chart.tput": ("Throughput (tokens/s)", "吞吐量（tokens/s）"),
    "trend.chart.comm": ("Communication share of the step", "通信占单步时间的比例"),
    "trend.chart.mfu": ("Model FLOPs utilisation (MFU)", "模型算力利用率（MFU）"),
    "trend.key.bubble": (
        "solid: idle / (idle + busy); dashed: idle / busy",
        "实线：空闲 / (空闲 + 计算)；虚线：空闲 / 计算",
    ),
    "trend.key.comm": ("solid: TP · dashed: PP · dotted: DP", "实线：TP · 虚线：PP · 点线：DP"),
    "trend.m.bubble_fraction": ("bubble / step", "气泡 / 总时长"),
    "trend.m.bubble_over_ideal": ("bubble / ideal", "气泡 / 理想计算"),
    "trend.m.tp_share": ("TP", "TP"),
    "trend.m.pp_share": ("PP", "PP"),
    "trend.m.dp_share": ("DP", "DP"),
    "trend.teach.bubble": (
        "With p stages and m micro-batches the pipeline idles (p−1)/(m+p−1) of the time "
        "(1F1B, equal stages): more micro-batches dilute the warm-up and drain, interleaving "
        "with v chunks divides the bubble by v, and zero-bubble schedules fill it with W.",
        "p 个阶段、m 个微批时，流水线有 (p−1)/(m+p−1) 的时间在空等（1F1B、各阶段等长）："
        "微批越多，开工与收尾的等待被摊得越薄；"
        "交错调度用 v 个模型块把气泡缩小为 1/v，零气泡调度用 W 填空。",
    ),
    "trend.teach.memory": (
        "Per GPU: (weights + gradients + optimizer) / (TP × PP) plus the activations the "
        "stage holds in flight. Above the red line the step does not fit: more micro-batches "
        "in flight, larger b or longer sequences push activations over HBM.",
        "每卡显存 ≈ (权重 + 梯度 + 优化器状态) / (TP × PP) + 该阶段同时在飞的激活值。"
        "红线以上装不下：在飞微批越多、b 越大或序列越长，激活值越容易超出显存。",
    ),
    "trend.teach.time": (
        "Step time = the simulated pipeline (compute, TP all-reduces, p2p hops, bubbles) + "
        "the DP gradient all-reduce + the optimizer.",
        "单步时间 = 模拟出的流水线时长（计算、TP AllReduce、点对点传输、气泡）"
        "+ DP 梯度 AllReduce + 优化器更新。",
    ),
    "trend.teach.tput": (
        "Tokens per second = global batch × sequence length / step time, with global batch "
        "B = DP × b × m.",
        "每秒 token 数 = 全局批 × 序列长度 / 单步时间，其中全局批 B = DP × b × m。",
    ),
    "trend.teach.comm": (
        "Seconds each axis spends communicating, over the step time. TP all-reduces twice "
        "per layer per pass, so it belongs inside a node; PP sends one activation per "
        "micro-batch per boundary; DP all-reduces the gradients once per step.",
        "每个轴的通信秒数占单步时间的比例。"
        "TP 每层每次前向/反向要做两次 AllReduce，所以应放在节点内；"
        "PP 每个微批在每个阶段边界传一次激活值；DP 每步对梯度做一次 AllReduce。",
    ),
    "trend.teach.mfu": (
        "MFU = model FLOPs per second / (GPUs × peak FLOP/s): bubbles, communication and "
        "recomputation all lower it.",
        "MFU = 每秒模型浮点运算量 / (GPU 数 × 峰值算力)：气泡、通信和重计算都会把它拉低。",
    ),
    "plan.title": ("Configuration planner", "并行配置规划"),
    "plan.intro": (
        "Every (DP, TP, PP, schedule, chunks, micro-batch size, ZeRO, recompute) that divides "
        "the GPUs and the global batch is costed; TP stays inside a node, as the article "
        "advises. The fastest that fit in memory come first, each with why it wins or loses.",
        "枚举所有能整除 GPU 数和全局批的"
        " (DP, TP, PP, 调度, 模型块数, 微批大小, ZeRO, 重计算) 组合并估算代价；"
        "按文中的建议，TP 留在节点内。装得下的配置按速度排序，并说明各自胜出或落后的原因。",
    ),
    "plan.form": ("Cluster and batch", "集群与批大小"),
    "plan.field.model": ("model preset", "模型预设"),
    "plan.field.hardware": ("hardware preset", "硬件预设"),
    "plan.field.gpus": ("GPUs", "GPU 数"),
    "plan.field.global_batch": ("global batch (sequences)", "全局批大小（序列数）"),
    "plan.field.top": ("configurations shown", "显示的配置数"),
    "plan.submit": ("Plan", "开始规划"),
    "plan.searched": (
        "{searched} configurations searched, {fitting} fit in memory (by the quick estimate).",
        "共搜索 {searched} 种配置，其中 {fitting} 种装得下（按快速估算）。",
    ),
    "plan.results": ("Fastest configurations that fit", "装得下的最快配置"),
    "plan.not_fitting": ("Closest configurations that do not fit", "最接近但装不下的配置"),
    "plan.none": ("No configuration fits in memory.", "没有任何配置装得下。"),
    "plan.col.schedule": ("schedule (v)", "调度（v）"),
    "plan.col.batch": ("b × m", "b × m"),
    "plan.col.memory": ("memory / GPU", "每卡显存"),
    "plan.col.step": ("step time", "单步时间"),
    "plan.col.why": ("why", "原因"),
    "plan.col.open": ("open", "打开"),
    "plan.open_overview": ("overview", "概览"),
    "plan.open_flow": ("flow", "流程"),
    "plan.reason.fastest": ("fastest that fits", "装得下的最快配置"),
    "plan.reason.of_best": ("{x} of the best", "为最佳的 {x}"),
    "plan.reason.misfit": ("does not fit in memory", "显存装不下"),
    "plan.reason.parts": (
        "{lead}: bubble {b}, TP comm {tp}, DP all-reduce {dp}, memory {mem} of HBM",
        "{lead}：气泡 {b}，TP 通信 {tp}，DP AllReduce {dp}，显存占 HBM 的 {mem}",
    ),
}
