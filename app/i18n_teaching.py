"""The source article's teaching text, in English and Chinese: analogies and formula notes.

Kept apart from the UI labels in ``app.i18n`` because it is prose: the views show it beside
the picture it explains (the grid, the formulas, the timeline).
"""

from __future__ import annotations

TEACHING: dict[str, tuple[str, str]] = {
    "teach.walls": (
        "One cook making a banquet hits two walls: the counter cannot hold every dish's "
        "ingredients, and one pair of hands cannot finish in time. Training a huge model hits "
        "the same two: the memory wall and the compute wall. An 80 GB H100 cannot even hold "
        "the ~200 GB of FP16 weights of a 100B-parameter model. The only way over is to split "
        "the work.",
        "一个人做满汉全席，会撞上两堵墙：厨房案板放不下几十道菜的食材，一双手也来不及在开席前做完。"
        "训练超大模型也一样——“显存墙”和“算力墙”。一块 80GB 的 H100 连 100B 参数模型约 200GB 的 "
        "FP16 权重都装不下。想翻墙，唯一的办法是“把活分出去”。",
    ),
    "teach.factory": (
        "In factory terms: first split the plant into workshops (PP), then give each workshop "
        "several workers sharing one job (TP), and finally copy the whole production line "
        "(DP). Three perpendicular axes, so the GPU count is their product.",
        "用工厂语言说：先分车间（PP），再给车间配多名分工的工人（TP），最后复制一整条生产线（DP）。"
        "三个维度互相垂直，GPU 总数恰好是三者乘积。",
    ),
    "teach.dp": (
        "DP is a cake shop with ten thousand orders: copy the baker, oven and recipe ten "
        "times, and let each copy bake a different batch. Every GPU holds the whole model and "
        "a slice of the batch; the gradients differ a little, so the DP group averages them "
        "(all-reduce) before the common update.",
        "数据并行像接到一万个订单的蛋糕店：复制十套“师傅+烤箱+配方”，每套认领不同的原料批次。"
        "每张 GPU 保存完整模型、领一份数据；各卡梯度略有差异，所以 DP 组内要求和取平均"
        "（AllReduce）再统一更新。",
    ),
    "teach.tp": (
        "TP is a steel plate too big for one machine: mark it into squares, let several "
        "masters grind one square each, then fit the pieces back together. Each layer's "
        "weight matrix is split across GPUs; each computes its part and an all-reduce "
        "restores the full output. Workers who hand tools to each other at every step must "
        "stand close: TP belongs on NVLink, inside one node.",
        "张量并行像一台机床塞不下的巨型钢板：画上格子切开，几个师傅各磨一块，再严丝合缝拼起来。"
        "每层权重矩阵切到多张 GPU，各算一块，再用 AllReduce 还原完整输出。每道工序都要递工具、"
        "对尺寸的师傅必须站得近——TP 必须绑在节点内的 NVLink 上。",
    ),
    "teach.pp": (
        "PP is a kitchen split into stations: one washes and cuts, one cooks, one plates. "
        "Consecutive layers form stages, and data flows through them like half-finished "
        "dishes. At the start the later stations wait for food and at the end the early ones "
        "wait: that waste is the bubble. Put more items on the belt (more micro-batches m) "
        "and the waiting thins out; but each one held in flight costs activation memory.",
        "流水线并行像把后厨拆成工位：洗切、下锅、装盘。连续的层组成阶段，数据像半成品依次流过。"
        "开工时后面的工位空等原料，收工时前面的工位空等下游，这段浪费叫“气泡”。"
        "传送带上多放几件半成品（增大微批次 m），等待就被摊薄；但在途的每一件都占激活显存。",
    ),
    "teach.layout": (
        "Communication volume runs TP > PP > DP, so whoever talks most sits closest to the "
        "fast links: TP fills a node's NVLink, PP crosses nodes over a fast network, DP "
        "syncs once per step and can cross nodes freely. With 8 GPUs per node: TP = 8 fills "
        "a node, PP spans nodes, DP multiplies to fill the cluster.",
        "通信量大约是 TP > PP > DP，谁的网络占用高，谁就离高速互联更近：TP 先喂满节点内 NVLink，"
        "PP 跨节点走高速网络，DP 每步只同步一次、可以放心跨节点。8 卡一台时：TP=8 占满单节点，"
        "PP 跨节点分阶段，DP 乘一个倍数铺满集群。",
    ),
    "teach.flow": (
        "The article's demo: at time step t, stage s works on micro-batch t − s, so a step "
        "is active when 0 ≤ t − s < m, and fill to drain takes m + p − 1 steps. The grid "
        "beside the timeline lights every GPU of a busy stage: all DP replicas and TP shards "
        "of that stage work at once.",
        "文章的演示：第 t 个时间步，第 s 阶段处理第 t − s 个微批；当 0 ≤ t − s < m 时该阶段活跃，"
        "从启动到排空共 m + p − 1 步。时间线旁的网格点亮忙碌阶段的所有 GPU："
        "该阶段的全部 DP 副本和 TP 切片同时在算。",
    ),
    "formula.world.title": ("GPU count", "GPU 总数"),
    "formula.world.text": (
        "The three axes are perpendicular, so the total is their product; for a fixed "
        "count, how you split it decides who talks to whom over which link.",
        "三个维度互相垂直，总数是三者乘积；总卡数固定时，怎么分配决定了谁和谁、走哪条链路通信。",
    ),
    "formula.allreduce.title": ("Gradient all-reduce (DP)", "梯度 AllReduce（DP）"),
    "formula.allreduce.text": (
        "Each of the N replicas computes a gradient on its own slice of data; the DP group "
        "sums and averages them so every replica applies the same update. The volume is "
        "proportional to the parameter count, once per step.",
        "N 个副本各自在自己的数据上算梯度；DP 组内求和取平均，让每个副本做同样的更新。"
        "通信量与参数量成正比，每步一次。",
    ),
    "formula.split.title": ("Splitting Y = XW (TP)", "切分 Y = XW（TP）"),
    "formula.split.text": (
        "Split W by rows into two blocks and X by columns to match; each GPU multiplies its "
        "pair, and an all-reduce adds the partial products back into exactly Y. This happens "
        "in every layer's forward and backward, which is why TP needs NVLink.",
        "把 W 按行切成上下两块，X 相应地按列切，两张卡各算局部乘积，再用 AllReduce 相加，"
        "精确还原 Y。每层的前向和反向都要做一次，所以 TP 离不开 NVLink。",
    ),
    "formula.bubble.title": ("Pipeline bubble", "流水线气泡"),
    "formula.bubble.text": (
        "With p stages and m micro-batches, fill and drain leave p − 1 of the m + p − 1 "
        "steps idle on each stage. More micro-batches thin the bubble; interleaving and "
        "zero-bubble schedules shrink it further.",
        "p 个阶段、m 个微批时，每个阶段在 m + p − 1 步中有 p − 1 步空闲。增大 m 可以摊薄气泡；"
        "交错调度和零气泡调度还能进一步压缩。",
    ),
    "formula.memory.title": ("Memory per GPU", "单卡显存"),
    "formula.memory.text": (
        "Weights, gradients and optimizer states are split by TP and by PP (each stage holds "
        "only its layers); activations are spread over PP stages, and each stage holds one "
        "set per micro-batch still in flight.",
        "权重、梯度和优化器状态被 TP 均分、被 PP 按层切分；激活则被 PP 按段摊薄，"
        "每个阶段要为每个在途微批保存一份。",
    ),
    "formula.batch.title": ("Effective batch with gradient accumulation", "梯度累积后的等效批量"),
    "formula.batch.text": (
        "When DP syncs too often, accumulate gradients over k micro-batches before one "
        "all-reduce: the effective batch grows with DP, the micro-batch size and k (in a "
        "pipeline, the m micro-batches of one step are accumulated the same way).",
        "DP 同步太频繁时，可以攒 k 个微批的梯度再统一 AllReduce：等效批量随 DP、微批大小和 k "
        "一起变大（流水线里一步的 m 个微批也是这样累积的）。",
    ),
}
