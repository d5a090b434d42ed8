"""The self-test's questions, choices and reasonings (quiz.<key>.*), in English and Chinese;
the question list itself, with each proof link, is app/core/teach/quiz.py."""

from __future__ import annotations

# Two claims' choices are shared (true, false); a multiple choice lists its own.
QUESTIONS: dict[str, tuple[str, str]] = {
    "quiz.dp_memory.q": (
        "Data parallelism saves memory: with 4 DP replicas each GPU holds a quarter of the model.",
        "数据并行能省显存：4 路 DP 时，每张卡只存四分之一的模型。",
    ),
    "quiz.dp_memory.why": (
        "Every DP replica holds the whole model, its gradients and optimizer state: DP splits the "
        "data, not the model (only ZeRO shards those states across the DP group). The article: "
        "every card must hold the full model plus optimizer states. DP=1 and DP=4 show the same "
        "per-GPU state; DP alone on the factory comparison runs out of memory.",
        "每个 DP 副本都保存完整模型、梯度和优化器状态：DP 切的是数据，不是模型（只有 ZeRO 才在 DP "
        "组内切分这些状态）。原文：每张卡都要装下完整模型加优化器状态，显存一点没省。DP=1 与 DP=4 "
        "每卡状态相同；工厂对比里只用 DP 的方案显存不足。",
    ),
    "quiz.tp_nodes.q": (
        "Tensor parallelism across nodes is fine: an all-reduce costs the same wherever the GPUs "
        "sit.",
        "TP 跨节点也没关系：AllReduce 无论卡放在哪里，代价都一样。",
    ),
    "quiz.tp_nodes.why": (
        "TP all-reduces activations in every layer, forward and backward, and nothing hides them. "
        "Inside a node they ride NVLink; across nodes they go through the network card, about an "
        "order of magnitude slower. Hence the article's iron rule: a TP group stays in one node. "
        "TP=16 over two nodes spends a larger share of its step in TP than TP=8 in one.",
        "TP 每一层的前向和反向都要对激活做 AllReduce，而且没有计算可以掩盖。节点内走 NVLink；"
        "跨节点只能走网卡，慢约一个数量级。所以原文有条铁律：TP 组必须放在同一台节点内。TP=16 "
        "跨两个节点时，单步中 TP 通信的占比比节点内的 TP=8 更高。",
    ),
    "quiz.1f1b_bubble.q": ("1F1B has a smaller bubble than GPipe.", "1F1B 的气泡比 GPipe 小。"),
    "quiz.1f1b_bubble.why": (
        "With the same p stages and m micro-batches both idle (p−1)/(m+p−1) of the pipeline time "
        "(Narayanan et al. 2021, §2.2): 1F1B only reorders the work. What it saves is activation "
        "memory: at most p micro-batches in flight instead of m. At p = 4, m = 8 both bubbles are "
        "3/11 ≈ 27%, but the peak in flight is 4 against 8.",
        "同样 p 个阶段、m 个微批时，两者空闲时间都是流水线时间的 (p−1)/(m+p−1)（Narayanan 等 "
        "2021，§2.2）：1F1B 只是调整了顺序。它省的是激活显存：在途微批最多 p 个，而不是 m 个。p = "
        "4、m = 8 时两者气泡都是 3/11 ≈ 27%，但在途峰值是 4 对 8。",
    ),
    "quiz.more_pp.q": ("More pipeline stages is always faster.", "流水线段数越多，训练一定越快。"),
    "quiz.more_pp.why": (
        "At a fixed m the bubble (p−1)/(m+p−1) grows with p, every stage boundary adds a p2p hop, "
        "and the first stage holds up to p micro-batches of activations. Eight stages with m = 8 "
        "idle 7/15 ≈ 47% before any hop is counted. Use PP when the model does not fit, and raise "
        "m along with it.",
        "m 固定时，气泡 (p−1)/(m+p−1) 随 p 增大；每多一个阶段边界就多一次点对点传递；"
        "第一阶段最多要存 p 个微批的激活。8 段、m = 8 时，不算传递就有 7/15 ≈ 47% 在空等。"
        "模型放不下时才用 PP，并同时增大 m。",
    ),
    "quiz.grad_accum.q": (
        "Gradient accumulation changes the math: 2 accumulated micro-batches are not the same as "
        "one batch twice the size.",
        "梯度累积会改变数学结果：累积 2 个微批，和一次算 2 倍大的批量不一样。",
    ),
    "quiz.grad_accum.why": (
        "The gradient of a mean loss is the mean of the micro-batch gradients, so summing them "
        "(each scaled by 1/k) before one all-reduce gives the big batch's update, up to rounding "
        "and batch-dependent layers such as BatchNorm. What changes is how often DP syncs: once "
        "per step. DP=4 × 4 micro-batches and DP=2 × 8 train the same global batch of 16.",
        "平均损失的梯度等于各微批梯度的平均，所以先把它们累加（各乘 1/k）再做一次 AllReduce，"
        "得到的更新与大批量相同，只差舍入误差和 BatchNorm 这类依赖批量的层。改变的只是 DP "
        "同步的频率：每步一次。DP=4 × 4 个微批与 DP=2 × 8 个微批训练的全局批量都是 16。",
    ),
    "quiz.gpus_sum.q": (
        "A DP=2, TP=2, PP=2 job needs 2 + 2 + 2 = 6 GPUs.",
        "DP=2、TP=2、PP=2 的任务需要 2 + 2 + 2 = 6 张 GPU。",
    ),
    "quiz.gpus_sum.why": (
        "The three axes are orthogonal: every (DP, PP, TP) coordinate is its own GPU, so the "
        "count is the product, 2 × 2 × 2 = 8. The article's demo prints all eight.",
        "三个维度互相垂直：每个 (DP, PP, TP) 坐标都是一张独立的卡，所以总数是乘积 2 × 2 × 2 = 8。"
        "原文演示把这 8 张卡全部打印了出来。",
    ),
    "quiz.more_m.q": (
        "More micro-batches only help: they shrink the bubble at no cost.",
        "微批越多越好：能摊薄气泡，而且没有代价。",
    ),
    "quiz.more_m.why": (
        "The bubble (p−1)/(m+p−1) does shrink, but under GPipe every micro-batch's activations "
        "wait for its backward, so activation memory grows with m (the article: too many "
        "micro-batches and activation memory rises). With p = 4, going from m = 4 to 16 cuts the "
        "bubble from 3/7 to 3/19 and raises the peak in flight from 4 to 16.",
        "气泡 (p−1)/(m+p−1) 确实会变小，但在 GPipe 下每个微批的激活都要等到它的反向才释放，"
        "所以激活显存随 m 增长（原文：微批太多，激活显存也会水涨船高）。p = 4 时，m 从 4 增到 16，"
        "气泡从 3/7 降到 3/19，在途峰值从 4 升到 16。",
    ),
    "quiz.bf16_all.q": (
        "Mixed precision (BF16) halves all of training's memory.",
        "混合精度（BF16）能把训练的所有显存都减半。",
    ),
    "quiz.bf16_all.why": (
        "BF16 halves the activations, but with Adam the model state stays 16 bytes per parameter: "
        "BF16 weights and gradients (2 + 2) plus FP32 master weights and two moments (12), "
        "against 4 + 4 + 8 in plain FP32 (Rajbhandari et al. 2020, ZeRO §3.1). The article also "
        "warns to re-check TP bandwidth at half precision.",
        "BF16 能把激活减半，但用 Adam 时模型状态仍是每参数 16 字节：BF16 权重和梯度（2 + 2）加上 "
        "FP32 主权重和两个动量（12），而纯 FP32 是 4 + 4 + 8（Rajbhandari 等 2020，ZeRO §3.1）。"
        "原文也提醒：换成半精度后要重新核对 TP 组内的通信带宽。",
    ),
    "quiz.bubble_formula.q": (
        "p stages, m micro-batches, equal stage times: what fraction of the pipeline time is "
        "bubble under GPipe or 1F1B?",
        "p 个阶段、m 个微批、各阶段耗时相同：GPipe 或 1F1B 下，气泡占流水线时间的比例是多少？",
    ),
    "quiz.bubble_formula.c0": ("(p−1)/(m+p−1)", "(p−1)/(m+p−1)"),
    "quiz.bubble_formula.c1": ("(p−1)/m", "(p−1)/m"),
    "quiz.bubble_formula.c2": ("1/p", "1/p"),
    "quiz.bubble_formula.c3": ("(m−1)/(m+p−1)", "(m−1)/(m+p−1)"),
    "quiz.bubble_formula.why": (
        "Filling and draining cost p−1 of the m+p−1 slots each stage runs through (Huang et al. "
        "2019, GPipe). Narayanan et al. 2021 write (p−1)/m: the same idle time over the ideal "
        "time instead of the whole. The article's demo, p = 2 and m = 4: 1/5 = 20%, and its first "
        "and last time steps have half the GPUs idle.",
        "填充和排空占去每个阶段 m+p−1 个时间片中的 p−1 个（Huang 等 2019，GPipe）。Narayanan 等 "
        "2021 写成 (p−1)/m：同样的空闲时间，除以理想时间而不是总时间。原文演示 p = 2、m = 4：1/5 "
        "= 20%，第一个和最后一个时间步都有一半 GPU 空闲。",
    ),
    "quiz.memory_formula.q": (
        "Roughly, what does one GPU hold with mixed-precision Adam, Φ parameters and no ZeRO?",
        "混合精度 + Adam、Φ 个参数、不用 ZeRO 时，单卡显存大约是多少？",
    ),
    "quiz.memory_formula.c0": ("16Φ / (DP·TP·PP) + activations", "16Φ / (DP·TP·PP) + 激活"),
    "quiz.memory_formula.c1": (
        "16Φ / (TP·PP) + its stage's activations",
        "16Φ / (TP·PP) + 本阶段的激活",
    ),
    "quiz.memory_formula.c2": ("16Φ / DP + activations", "16Φ / DP + 激活"),
    "quiz.memory_formula.c3": ("2Φ / TP", "2Φ / TP"),
    "quiz.memory_formula.why": (
        "Weights (2 B), gradients (2 B) and Adam's FP32 master weights and moments (12 B) make 16 "
        "bytes per parameter (ZeRO §3.1). TP splits every layer and PP splits the layers, so a "
        "GPU keeps 1/(TP·PP) of them; DP copies them (ZeRO would divide by DP too). Activations "
        "come on top, set by the stage's micro-batches in flight.",
        "权重（2 B）、梯度（2 B）和 Adam 的 FP32 主权重与动量（12 B）合计每参数 16 字节（ZeRO "
        "§3.1）。TP 切每一层，PP 切层数，所以每卡保存 1/(TP·PP)；DP 只是复制（ZeRO 才会再除以 "
        "DP）。激活另算，取决于本阶段在途的微批数。",
    ),
    "quiz.tp_nvlink.q": (
        "Why do TP groups stay inside one node's NVLink domain?",
        "为什么 TP 组要放在同一节点的 NVLink 域内？",
    ),
    "quiz.tp_nvlink.c0": ("TP needs more memory than PP", "TP 比 PP 更占显存"),
    "quiz.tp_nvlink.c1": (
        "TP syncs gradients once per step, which needs low latency",
        "TP 每步同步一次梯度，对延迟敏感",
    ),
    "quiz.tp_nvlink.c2": (
        "TP all-reduces activations in every layer, forward and backward, on the critical path",
        "TP 每一层前向和反向都要对激活做 AllReduce，而且在关键路径上",
    ),
    "quiz.tp_nvlink.c3": ("NCCL cannot run TP across nodes", "NCCL 不支持跨节点的 TP"),
    "quiz.tp_nvlink.why": (
        "Megatron-LM's TP needs two all-reduces per layer in the forward and two in the backward "
        "(Shoeybi et al. 2019, §3), each waiting on the GEMM before it. DP's gradient all-reduce "
        "comes once per step and can overlap the backward; PP sends one activation per "
        "micro-batch per boundary. Across nodes the same TP all-reduce slows to the network's "
        "speed.",
        "Megatron-LM 的 TP 每层前向要两次 AllReduce，反向再两次（Shoeybi 等 2019，§3），"
        "每次都要等前面的矩阵乘算完。DP 的梯度 AllReduce 每步一次，还能与反向重叠；PP "
        "每个微批在每个边界只传一次激活。跨节点后，同样的 TP AllReduce 只能以网络的速度进行。",
    ),
    "quiz.comm_order.q": (
        "Rank the three axes by communication, heaviest first.",
        "按通信量给三种并行排序，从大到小。",
    ),
    "quiz.comm_order.c0": ("TP > PP > DP", "TP > PP > DP"),
    "quiz.comm_order.c1": ("DP > TP > PP", "DP > TP > PP"),
    "quiz.comm_order.c2": ("PP > DP > TP", "PP > DP > TP"),
    "quiz.comm_order.why": (
        "The article ranks them TP > PP > DP, so TP takes NVLink, PP crosses nodes on a fast "
        "network (InfiniBand) and DP, which syncs once per step, may cross nodes and even zones. "
        "Its own example: TP=8 fills a node, PP=8 spans nodes, DP=2 copies the line: 128 GPUs "
        "where only PP and DP cross node boundaries.",
        "原文的排序是 TP > PP > DP：TP 占 NVLink，PP 借高速网络（IB）跨节点，DP 每步只同步一次，"
        "可以跨节点甚至跨可用区。原文自己的例子：TP=8 占满单节点，PP=8 跨节点，DP=2 复制产线，共 "
        "128 张卡，只有 PP 和 DP 跨越节点边界。",
    ),
    "quiz.gpu5.q": (
        "In the article's DP=2 × TP=2 × PP=2 (tp = r % TP, pp = (r // TP) % PP, dp = r // "
        "(TP·PP)), which is GPU5?",
        "原文的 DP=2 × TP=2 × PP=2 布局中（tp = r % TP，pp = (r // TP) % PP，dp = r // (TP·PP)），"
        "GPU5 是哪一张？",
    ),
    "quiz.gpu5.c0": (
        "(DP=0, PP=1, TP=1), syncing with [5, 7]",
        "(DP=0, PP=1, TP=1)，与 [5, 7] 同步",
    ),
    "quiz.gpu5.c1": ("(DP=1, PP=1, TP=0), downstream 7", "(DP=1, PP=1, TP=0)，下游 7"),
    "quiz.gpu5.c2": (
        "(DP=1, PP=0, TP=1), syncing with [4, 5]",
        "(DP=1, PP=0, TP=1)，与 [4, 5] 同步",
    ),
    "quiz.gpu5.c3": (
        "(DP=1, PP=0, TP=1), syncing with [1, 5], downstream 7",
        "(DP=1, PP=0, TP=1)，与 [1, 5] 同步，下游 7",
    ),
    "quiz.gpu5.why": (
        "5 % 2 = 1 gives TP=1, (5 // 2) % 2 = 0 gives PP=0, 5 // 4 = 1 gives DP=1. Its "
        "gradient-sync group shares its PP and TP: [1, 5]; downstream is the same DP and TP one "
        "stage on: 1·4 + 1·2 + 1 = 7. [4, 5] is its TP group, not its sync group.",
        "5 % 2 = 1 得 TP=1，(5 // 2) % 2 = 0 得 PP=0，5 // 4 = 1 得 DP=1。梯度同步组是 PP、TP "
        "坐标相同的卡：[1, 5]；下游是同一 DP、TP 的下一阶段：1·4 + 1·2 + 1 = 7。[4, 5] 是它的 TP "
        "组，不是同步组。",
    ),
    "quiz.interleaved.q": (
        "What does the interleaved (virtual-stage) 1F1B schedule trade?",
        "交错（虚拟流水线）1F1B 调度用什么换什么？",
    ),
    "quiz.interleaved.c0": (
        "Less activation memory for a bigger bubble",
        "用更大的气泡换更少的激活显存",
    ),
    "quiz.interleaved.c1": (
        "A smaller bubble for more p2p messages",
        "用更多的点对点传递换更小的气泡",
    ),
    "quiz.interleaved.c2": ("Nothing: same bubble, same traffic", "什么也没换：气泡和通信都一样"),
    "quiz.interleaved.why": (
        "Each GPU holds v chunks of layers, so the pipeline fills v times faster: the bubble "
        "falls to (p−1)/(v·m+p−1), while every micro-batch crosses v times as many boundaries "
        "(Narayanan et al. 2021, §2.2). At p = 4, m = 8, v = 2: 3/19 ≈ 16% against 3/11 ≈ 27%.",
        "每卡持有 v 块层，流水线填满快 v 倍：气泡降到 (p−1)/(v·m+p−1)，但每个微批要跨越的边界多了 "
        "v 倍（Narayanan 等 2021，§2.2）。p = 4、m = 8、v = 2 时：3/19 ≈ 16%，对比 3/11 ≈ 27%。",
    ),
    "quiz.tp_share.q": (
        "Profiling shows TP communication above 30% of the step. What does the article advise?",
        "Profiling 发现 TP 通信占单步 30% 以上，原文建议怎么做？",
    ),
    "quiz.tp_share.c0": (
        "Lower TP and give the GPUs to PP or DP",
        "减少 TP，把算力预算让给 PP 或 DP",
    ),
    "quiz.tp_share.c1": ("Raise TP to split the work further", "增大 TP，把活分得更细"),
    "quiz.tp_share.c2": ("Add micro-batches", "增加微批数"),
    "quiz.tp_share.why": (
        "The article's first tuning tip: when TP communication passes 30%, reduce TP and spend "
        "the budget on PP or DP; when the bubble is large, add micro-batches. The overview's "
        "advice card applies the same rule to the scenario's own numbers.",
        "原文的第一招：TP 通信占比超过 30% 时，减少 TP，把算力预算让给 PP 或 DP；流水线气泡大时，"
        "才增加微批数。概览页的建议卡片用同一条规则检查当前场景的数字。",
    ),
}
