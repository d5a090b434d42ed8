"""Strings of the collectives primer (/primer), in English and Chinese."""

from __future__ import annotations

PRIMER: dict[str, tuple[str, str]] = {
    "nav.primer": ("Collectives", "通信原语"),
    "primer.title": ("Collectives made visible", "看得见的集合通信"),
    "primer.intro": (
        "Three pictures of the current scenario, from the same numbers as every other view: "
        "a ring all-reduce step by step on one DP or TP group, what ZeRO keeps on each "
        "data-parallel GPU and when it talks, and how activation memory rises through the "
        "forwards and falls through the backwards on each pipeline stage.",
        "用当前场景、与其他视图相同的数字画出三幅图：在一个数据并行或张量并行组上逐步演示环形 "
        "All-Reduce；ZeRO 让每个数据并行 GPU 保存什么、何时通信；以及每个流水线阶段的激活显存"
        "如何随前向上升、随反向回落。",
    ),
    "primer.controls": ("Which ring to draw", "选择要画的环"),
    "primer.field.group": ("ring over the group", "环所在的并行组"),
    "primer.group.dp": ("data parallel: gradients", "数据并行：梯度"),
    "primer.group.tp": ("tensor parallel: activations", "张量并行：激活"),
    "primer.field.rank": ("through global GPU", "经过的全局 GPU 编号"),
    "primer.apply": ("Show this ring", "显示该环"),
    "primer.edit": ("Change the scenario on the overview page", "在总览页修改场景"),
    "primer.ring.title": (
        "Ring all-reduce = reduce-scatter + all-gather",
        "环形 All-Reduce = Reduce-Scatter + All-Gather",
    ),
    "primer.ring.facts": (
        "GPUs {ranks} all-reduce {what}, {size} on each GPU, cut into n = {n} chunks of {chunk}: "
        "{rs} reduce-scatter steps, then {rs} all-gather steps, {total} = 2(n−1) in all.",
        "GPU {ranks} 对{what}做 All-Reduce，每个 GPU {size}，切成 n = {n} 块、每块 {chunk}："
        "先 {rs} 步 Reduce-Scatter，再 {rs} 步 All-Gather，共 2(n−1) = {total} 步。",
    ),
    "primer.ring.bytes": (
        "Each GPU sends {chunk} per step, {per_rank} in all: 2(n−1)/n × size = {total}/{n} × "
        "{size} (Patarasuk & Yuan 2009; NCCL's bus bandwidth).",
        "每个 GPU 每步发送 {chunk}，合计 {per_rank}：2(n−1)/n × 数据量 = {total}/{n} × {size}"
        "（Patarasuk & Yuan 2009；NCCL 总线带宽约定）。",
    ),
    "primer.what.gradients": ("their gradients", "各自的梯度"),
    "primer.what.activations": (
        "one layer pass's b×s×h activations",
        "一层一次前向的 b×s×h 激活",
    ),
    "primer.ring.single": (
        "This group has a single GPU: there is nothing to reduce.",
        "该组只有一个 GPU，没有可归约的数据。",
    ),
    "primer.ring.undrawn": (
        "Groups of more than {max} GPUs are not drawn step by step; the byte counts still hold.",
        "超过 {max} 个 GPU 的组不逐步绘制，上面的字节数仍然成立。",
    ),
    "primer.cap.start": (
        "Step 0 of {total}: every GPU holds only its own data, 1 of the {n} contributions in "
        "each chunk.",
        "第 0 步（共 {total} 步）：每个 GPU 只有自己的数据，每块只含 {n} 份中的 1 份。",
    ),
    "primer.cap.reduce_scatter": (
        "Step {k} of {total}, reduce-scatter: each GPU sends one chunk to its right-hand "
        "neighbour, which adds it to its partial sum.",
        "第 {k} 步（共 {total} 步），Reduce-Scatter：每个 GPU 把一块发给右侧邻居，邻居把它加到"
        "自己的部分和上。",
    ),
    "primer.cap.all_gather": (
        "Step {k} of {total}, all-gather: each GPU passes a finished chunk on, and the receiver "
        "overwrites its copy.",
        "第 {k} 步（共 {total} 步），All-Gather：每个 GPU 把一块已求和完毕的数据传下去，接收方"
        "直接覆盖自己的副本。",
    ),
    "primer.cap.done": (
        "Step {k} of {total}: every GPU now holds the full sum of every chunk.",
        "第 {k} 步（共 {total} 步）：每个 GPU 都拿到了每一块的完整和。",
    ),
    "primer.ring.send": ("GPU {from} → GPU {to}: chunk {c}", "GPU {from} → GPU {to}：第 {c} 块"),
    "primer.ring.held": ("{count} of {n} summed", "已累加 {count}/{n}"),
    "primer.ring.cell": ("chunk {c}: {count} of {n}", "第 {c} 块：{count}/{n}"),
    "primer.ring.sent_so_far": ("sent so far per GPU: {bytes}", "每 GPU 累计发送：{bytes}"),
    "primer.first": ("First ring step", "回到第一步"),
    "primer.prev": ("Previous ring step", "上一步"),
    "primer.next": ("Next ring step", "下一步"),
    "primer.play": ("Play the ring", "播放"),
    "primer.pause": ("Pause the ring", "暂停"),
    "primer.step": ("ring step", "环形步骤"),
    "primer.zero.title": (
        "ZeRO: what each data-parallel GPU keeps, and when it communicates",
        "ZeRO：每个数据并行 GPU 保存什么、何时通信",
    ),
    "primer.zero.intro": (
        "ZeRO-1 splits the optimizer states over the {n} data-parallel GPUs, ZeRO-2 the "
        "gradients too, ZeRO-3 the parameters too (Rajbhandari et al. 2020, §5). Per-GPU "
        "bytes for pipeline stage {stage}; the scenario runs ZeRO-{z}.",
        "ZeRO-1 把优化器状态切分到 {n} 个数据并行 GPU 上，ZeRO-2 再切梯度，ZeRO-3 再切参数"
        "（Rajbhandari 等 2020，§5）。下表是流水线阶段 {stage} 每个 GPU 的字节数；当前场景使用 "
        "ZeRO-{z}。",
    ),
    "primer.zero.col.stage": ("ZeRO stage", "ZeRO 阶段"),
    "primer.zero.col.total": ("per GPU in all", "每 GPU 合计"),
    "primer.zero.split": ("split 1/{n}", "切分为 1/{n}"),
    "primer.zero.full": ("full copy", "完整副本"),
    "primer.zero.open": ("Show ZeRO-{z}", "查看 ZeRO-{z}"),
    "primer.zero.shards_title": ("Who owns which slice", "各 GPU 负责的分片"),
    "primer.zero.shard": (
        "GPU {rank} owns parameters {lo} to {hi} ({count})",
        "GPU {rank} 负责参数 {lo} 至 {hi}（{count} 个）",
    ),
    "primer.zero.schedule_title": ("ZeRO-{z} collectives in one step", "ZeRO-{z} 一步中的通信"),
    "primer.zero.none": ("No DP communication in this step.", "这一步没有数据并行通信。"),
    "primer.zero.row": (
        "{each} each × {count} × {repeats} micro-batches = {bytes} per GPU",
        "每次 {each} × {count} 次 × {repeats} 个微批 = 每 GPU {bytes}",
    ),
    "primer.zero.total": (
        "DP bytes per GPU per step: {bytes}, as the cost model counts them.",
        "每步每 GPU 的数据并行通信量：{bytes}，与代价模型一致。",
    ),
    "primer.phase.forward": ("before each layer's forward", "每层前向之前"),
    "primer.phase.backward": ("with each layer's backward", "每层反向时"),
    "primer.phase.after_backward": ("after the backward", "反向结束后"),
    "primer.phase.step": ("optimizer step", "优化器更新"),
    "primer.phase.after_step": ("after the optimizer step", "优化器更新之后"),
    "primer.coll.all_gather": ("all-gather of", "All-Gather："),
    "primer.coll.reduce_scatter": ("reduce-scatter of", "Reduce-Scatter："),
    "primer.coll.all_reduce": ("all-reduce of", "All-Reduce："),
    "primer.what.params": ("parameters", "参数"),
    "primer.what.grads": ("gradients", "梯度"),
    "primer.what.optimizer": ("Adam updates the full copy", "Adam 更新完整副本"),
    "primer.what.optimizer_slice": ("Adam updates only its own slice", "Adam 只更新自己的分片"),
    "primer.mem.title": (
        "Activation memory through the step, per pipeline stage",
        "一步之中各流水线阶段的激活显存",
    ),
    "primer.mem.intro": (
        "Each forward stores one micro-batch's activations, each backward frees them, in "
        "the simulated order of this schedule. The top of each line is the activation part "
        "of the peak stack beside it (the last stage's stack adds its output logits).",
        "按本调度的模拟顺序，每次前向存下一个微批的激活，每次反向释放它们。每条线的最高点就是"
        "旁边峰值堆叠图中的激活部分（最后一个阶段的堆叠图另含输出 logits）。",
    ),
    "primer.mem.stage": ("stage {s}", "阶段 {s}"),
    "primer.mem.time": ("time in the step (s)", "步内时间（秒）"),
    "primer.mem.peak": (
        "Stage {s}: peak {peak}, {inflight} micro-batches in flight",
        "阶段 {s}：峰值 {peak}，同时在途 {inflight} 个微批",
    ),
    "primer.mem.stack": ("Peak memory per GPU, by kind", "每 GPU 峰值显存构成"),
}
