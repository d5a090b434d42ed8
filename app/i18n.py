"""Every visible string in English and Chinese; the article's teaching text is part of it.

A key maps to ``(en, zh)``. Templates call ``t(key)``; the page's JS gets the table for its
language embedded in the page, so nothing is translated in two places. A test checks every
key has both languages and that the zh page shows no English label.
"""

from __future__ import annotations

from app import (
    i18n_compare,
    i18n_dualpipe,
    i18n_durations,
    i18n_errors,
    i18n_fidelity,
    i18n_flow,
    i18n_formulas,
    i18n_live,
    i18n_primer,
    i18n_recompute,
    i18n_teaching,
    i18n_trend,
)

LANGS = ("en", "zh")

UI: dict[str, tuple[str, str]] = {
    "app.tagline": ("See DP × TP × PP 3D parallelism", "看懂 DP × TP × PP 三维并行"),
    "nav.overview": ("Overview", "概览"),
    "nav.flow": ("Flow", "流程"),
    "nav.api": ("JSON API", "JSON 接口"),
    "nav.quiz": ("Self-test", "自测"),
    "lang.switch": ("中文", "English"),
    "copy.link": ("Copy link", "复制链接"),
    "copy.done": ("Link copied", "链接已复制"),
    "controls.title": ("Scenario", "场景设置"),
    "controls.more": ("Model, hardware and teaching units", "模型、硬件与教学时间单位"),
    "controls.preset": ("from preset", "取预设值"),
    "error.banner": (
        "Some parameters are invalid; the message is next to each control to fix.",
        "部分参数无效：请按各控件旁的提示修改。",
    ),
    "error.unknown": ("Unknown parameter", "未知参数"),
    "error.fix_first": (
        "Nothing to draw until the parameters above are fixed.",
        "请先修正上面的参数，才能绘制图形。",
    ),
    "error.network": ("Could not reach the server", "无法连接服务器"),
    "na": ("not in this version's cost model yet", "当前版本的成本模型尚未提供"),
    "grid.title": ("Rank grid", "GPU 编号网格"),
    "grid.color_by": ("Colour by", "着色依据"),
    "grid.hint": (
        "Hover a GPU for its coordinate; click it to light up its groups. "
        "Scroll to zoom, drag to pan.",
        "悬停查看 GPU 坐标；点击高亮它所在的组。滚轮缩放，拖动平移。",
    ),
    "grid.reset_zoom": ("Reset zoom", "重置缩放"),
    "grid.aggregated": (
        "Many GPUs: each node is drawn as one box; zoom in to see every GPU.",
        "GPU 数量很多：每个节点画成一格；放大可看到每张 GPU。",
    ),
    "grid.none_selected": ("Click a GPU to see its groups.", "点击一张 GPU 查看它的组。"),
    "grid.clear": ("Clear selection", "取消选择"),
    "rank": ("rank", "编号"),
    "node": ("node", "节点"),
    "coord": ("coordinate (dp, pp, tp)", "坐标 (dp, pp, tp)"),
    "group.tp": ("TP group", "TP 组"),
    "group.pp": ("pipeline (PP group)", "流水线（PP 组）"),
    "group.dp": ("DP group (gradient all-reduce)", "DP 组（梯度 AllReduce）"),
    "upstream": ("upstream", "上游"),
    "downstream": ("downstream", "下游"),
    "none.first": ("none (first stage)", "无（第一阶段）"),
    "none.last": ("none (last stage)", "无（最后一阶段）"),
    "crosses": ("crosses a node boundary", "跨越节点边界"),
    "within": ("inside one node", "在同一节点内"),
    "ranks_count": ("ranks", "张卡"),
    "orders.title": ("Rank order comparison", "编号顺序对比"),
    "orders.intro": (
        "The order lists axes fastest-varying first. Compare how many nodes one group of "
        "each axis spans: TP talks most, so it belongs inside a node.",
        "顺序从变化最快的轴写起。对比每个轴的一个组横跨几个节点：TP 通信最密集，应放在节点内。",
    ),
    "orders.order": ("order", "顺序"),
    "orders.frameworks": ("used by", "采用者"),
    "orders.spans": ("nodes one group spans", "一个组横跨的节点数"),
    "orders.current": ("current", "当前"),
    "orders.use": ("use", "采用"),
    "cards.title": ("Summary", "汇总"),
    "cards.world": ("World size", "GPU 总数"),
    "cards.memory": ("Memory per GPU, by pipeline stage", "每卡显存（按流水线阶段）"),
    "mem.weights": ("weights", "权重"),
    "mem.grads": ("gradients", "梯度"),
    "mem.optimizer": ("optimizer", "优化器状态"),
    "mem.activations": ("activations", "激活值"),
    "mem.capacity": ("HBM capacity", "显存容量"),
    "mem.oom": ("out of memory", "显存不足（OOM）"),
    "mem.fits": ("fits in memory", "显存够用"),
    "cards.bubble": ("Pipeline bubble", "流水线气泡"),
    "cards.bubble_note": ("idle share of pipeline time", "流水线时间中的空闲占比"),
    "cards.comm": ("Bytes per step and link", "每步通信量与链路"),
    "cards.perf": ("Step time, MFU, throughput", "单步时间、MFU、吞吐"),
    "perf.step_time": ("step time", "单步时间"),
    "perf.mfu": ("MFU", "MFU"),
    "perf.tokens": ("tokens/s", "tokens/秒"),
    "cards.advice": ("Advice", "调优建议"),
    "link.intra": ("inside a node (NVLink)", "节点内（NVLink）"),
    "link.inter": ("between nodes (network)", "跨节点（网络）"),
    "advice.none": ("No advice for this scenario.", "此场景暂无建议。"),
    "formulas.title": ("The formulas, explained", "公式与解读"),
    "stage": ("stage", "阶段"),
    "flow.title": ("Pipeline timeline", "流水线时间线"),
    "flow.play": ("Play", "播放"),
    "flow.pause": ("Pause", "暂停"),
    "flow.back": ("Step back", "后退一步"),
    "flow.forward": ("Step forward", "前进一步"),
    "flow.speed": ("Speed (steps/s)", "速度（步/秒）"),
    "flow.cursor": ("Time cursor", "时间游标"),
    "flow.step": ("step", "时间步"),
    "flow.time": ("time", "时间"),
    "flow.inflight": ("In-flight activations per stage", "各阶段在途激活数"),
    "flow.bubble_so_far": ("Bubble so far", "截至此刻的气泡占比"),
    "flow.active": ("GPUs active in this step", "本时间步活跃的 GPU"),
    "flow.mini_hint": (
        "Lit: GPUs computing in this step. Hover a block to see who runs it; "
        "click a GPU to show only its stage.",
        "亮起的是本步在计算的 GPU。悬停色块看是谁在执行；点击 GPU 只显示它的阶段。",
    ),
    "flow.filtered": ("Showing only the stage of rank", "仅显示该编号所在阶段："),
    "flow.show_all": ("show all stages", "显示全部阶段"),
    "flow.png": ("Download PNG", "下载 PNG"),
    "flow.trace": ("Chrome trace for Perfetto", "Chrome trace（可用 Perfetto 打开）"),
    "flow.tail": ("DP all-reduce and optimizer (the step's tail)", "DP AllReduce 与优化器（步尾）"),
    "flow.tp_pulse": ("TP all-reduce inside F and B", "F 与 B 内部的 TP AllReduce"),
    "kind.F": ("forward", "前向"),
    "kind.B": ("backward", "反向"),
    "kind.W": ("weight grad", "权重梯度"),
    "kind.dp": ("DP all-reduce", "DP AllReduce"),
    "kind.dp_hidden": (
        "DP all-reduce hidden under the backward (overlap_grad_reduce)",
        "被反向计算掩盖的 DP AllReduce（overlap_grad_reduce）",
    ),
    "kind.optim": ("optimizer", "优化器"),
    "kind.idle": ("idle (bubble)", "空闲（气泡）"),
    "kind.send": ("PP send", "PP 发送"),
    "units.abstract": ("time (teaching units)", "时间（教学单位）"),
    "units.s": ("time (s)", "时间（秒）"),
    "microbatch": ("micro-batch", "微批次"),
    "chunk": ("chunk", "模型块"),
    "hf.title": ("Import a Hugging Face config.json", "导入 Hugging Face 的 config.json"),
    "hf.paste": ("Paste the model's config.json", "粘贴模型的 config.json"),
    "hf.upload": ("Choose a file…", "选择文件…"),
    "hf.submit": ("Import the shape", "导入模型结构"),
    "hf.hint": (
        "Llama, Mistral, Qwen2/3, GPT-2, OPT, BLOOM, GPT-NeoX; dense models only. "
        "The shape replaces the model fields; DP, TP, PP and the rest stay.",
        "支持 Llama、Mistral、Qwen2/3、GPT-2、OPT、BLOOM、GPT-NeoX，仅限稠密模型。"
        "导入的结构替换模型字段，DP、TP、PP 等其余设置保持不变。",
    ),
    "hf.empty": (
        "Paste a config.json or choose a file first.",
        "请先粘贴 config.json 或选择文件。",
    ),
    "hf.failed": ("Not imported", "未能导入"),
    "hf.busy": ("Importing…", "正在导入…"),
    "balance.title": ("Layers and time per pipeline stage", "各流水线阶段的层数与时间"),
    "balance.layers": ("layers", "层数"),
    "balance.time": ("F+B per micro-batch", "每个微批次的前向+反向"),
    "balance.of_slowest": ("of the slowest stage", "相对最慢阶段"),
    "balance.embedding": ("+ embedding", "+ 词嵌入"),
    "balance.head": ("+ output head and loss", "+ 输出层与损失"),
    "balance.imbalance": ("idle share from imbalance", "不均衡造成的空等占比"),
    "balance.given": ("split from stage_layers", "按 stage_layers 切分"),
    "balance.default": (
        "default split: as even as the layer count allows",
        "默认切分：在层数允许下尽量均匀",
    ),
    "plan.note.deepspeed_refuses_zero_pp": (
        "DeepSpeed refuses ZeRO-2/3 with pipeline parallelism "
        "(Megatron-LM and torchtitan FSDP + PP allow ZeRO-3-like sharding)",
        "DeepSpeed 不支持 ZeRO-2/3 与流水线并行同时使用"
        "（Megatron-LM 与 torchtitan 的 FSDP + PP 允许类似 ZeRO-3 的切分）",
    ),
}

FIELDS: dict[str, tuple[str, str]] = {
    "field.dp": ("DP (data-parallel replicas)", "DP（数据并行副本数）"),
    "field.tp": ("TP (tensor-parallel shards)", "TP（张量并行切分数）"),
    "field.pp": ("PP (pipeline stages)", "PP（流水线阶段数）"),
    "field.order": ("rank order (fastest axis first)", "编号顺序（最快变化的轴在前）"),
    "field.gpus_per_node": ("GPUs per node", "每节点 GPU 数"),
    "field.schedule": ("schedule", "调度方式"),
    "field.microbatches": ("micro-batches (m)", "微批次数（m）"),
    "field.virtual_stages": ("chunks per rank (interleaved)", "每卡模型块数（交错调度）"),
    "field.model": ("model preset (custom: from the shape)", "模型预设（custom：按下列结构）"),
    "field.layers": ("layers", "层数"),
    "field.hidden": ("hidden size", "隐藏维度"),
    "field.heads": ("attention heads", "注意力头数"),
    "field.seq_len": ("sequence length", "序列长度"),
    "field.vocab": ("vocabulary", "词表大小"),
    "field.ffn_hidden": ("FFN hidden size", "FFN 隐藏维度"),
    "field.kv_heads": ("KV heads (GQA)", "KV 头数（GQA）"),
    "field.gated_mlp": ("gated MLP (SwiGLU)", "门控 MLP（SwiGLU）"),
    "field.tied_embeddings": ("tied input/output embeddings", "输入输出词嵌入共享"),
    "field.learned_positions": ("learned position table", "可学习位置嵌入"),
    "field.micro_batch_size": ("micro-batch size", "微批大小"),
    "field.dtype": ("precision", "精度"),
    "field.zero": ("ZeRO stage", "ZeRO 阶段"),
    "field.recompute": ("activation recompute", "激活重计算"),
    "field.sequence_parallel": ("sequence parallel", "序列并行"),
    "field.flash_attention": ("flash attention", "FlashAttention（不存注意力矩阵）"),
    "field.overlap_grad_reduce": (
        "overlap DP gradient sync with backward",
        "DP 梯度同步与反向重叠",
    ),
    "field.overlap_param_gather": ("prefetch ZeRO-3 parameter gathers", "ZeRO-3 参数预取重叠"),
    "field.tp_comm_overlap": (
        "overlap TP collectives with their GEMMs",
        "TP 通信与矩阵乘重叠",
    ),
    "field.hardware": ("hardware preset", "硬件预设"),
    "field.peak_tflops": ("peak TFLOP/s", "峰值 TFLOP/s"),
    "field.hbm_gib": ("HBM (GiB)", "显存（GiB）"),
    "field.intra_gbps": ("intra-node GB/s", "节点内带宽 GB/s"),
    "field.inter_gbps": ("inter-node GB/s", "节点间带宽 GB/s"),
    "field.f_time": ("F time (teaching units)", "前向时间（教学单位）"),
    "field.b_time": ("B time (teaching units)", "反向时间（教学单位）"),
    "field.w_time": ("W time (teaching units)", "权重梯度时间（教学单位）"),
    "field.p2p_time": ("p2p hop time (teaching units)", "点对点传输时间（教学单位）"),
    "field.stage_layers": (
        "layers per virtual stage (e.g. 31,32,32,31)",
        "每个虚拟阶段的层数（如 31,32,32,31）",
    ),
    "field.rank": ("selected rank", "选中的编号"),
    "field.t": ("time cursor", "时间游标"),
    "field.color": ("colour by", "着色依据"),
    "field.speed": ("speed", "速度"),
    "field.lang": ("language", "语言"),
}

STRINGS: dict[str, tuple[str, str]] = {
    **UI,
    **FIELDS,
    **i18n_teaching.TEACHING,
    **i18n_compare.COMPARE,
    **i18n_live.LIVE,
    **i18n_trend.TREND,
    **i18n_fidelity.FIDELITY,
    **i18n_formulas.FORMULAS,
    **i18n_primer.PRIMER,
    **i18n_flow.FLOW,
    **i18n_durations.DURATIONS,
    **i18n_dualpipe.DUALPIPE,
    **i18n_recompute.RECOMPUTE,
    **i18n_errors.ERRORS,
}


def strings(lang: str) -> dict[str, str]:
    """The whole table in one language (``en`` or ``zh``)."""
    i = LANGS.index(lang)
    return {key: pair[i] for key, pair in STRINGS.items()}


def translator(lang: str):
    """``t(key)`` for templates; an unknown key shows itself, so a gap is visible, not blank."""
    table = strings(lang)
    return lambda key: table.get(key, key)
