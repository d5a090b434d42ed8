"""Strings of the flow view's keys, captions and legend, in English and Chinese.

``flowcap.<key>`` words one clause of a frame's caption (``app/core/views/flow_captions.py``); its
args arrive as ``{0}``, ``{1}``, ... in the order the core lists them.
"""

from __future__ import annotations

FLOW: dict[str, tuple[str, str]] = {
    "flow.keys_hint": (
        "Keys: ← / → one step, Space plays or pauses (not while typing in a control).",
        "快捷键：← / → 前后一步，空格键播放或暂停（在输入框中输入时不生效）。",
    ),
    "flow.caption_title": ("What happens in this step", "这一步发生了什么"),
    "flow.captions_left_out": (
        "This timeline has too many steps for a sentence each; hover a block for its details.",
        "这条时间线的时间步太多，未逐步生成说明；悬停色块可查看详情。",
    ),
    "flowcap.at": ("t={0}: ", "t={0}："),
    "flowcap.sep": ("; ", "；"),
    "flowcap.end": (".", "。"),
    "flowcap.run": ("stage {1} (GPUs {2}) runs {0}", "阶段 {1}（GPU {2}）执行 {0}"),
    "flowcap.run_n": ("stage {1} ({2} GPUs) runs {0}", "阶段 {1}（{2} 张 GPU）执行 {0}"),
    "flowcap.more": ("{0} more stages compute", "另有 {0} 个阶段在计算"),
    "flowcap.send_f": (
        "stage {1} sends {0}'s activations to stage {2}",
        "阶段 {1} 把 {0} 的激活发给阶段 {2}",
    ),
    "flowcap.send_b": (
        "stage {1} sends {0}'s gradients back to stage {2}",
        "阶段 {1} 把 {0} 的梯度传回阶段 {2}",
    ),
    "flowcap.more_sends": ("{0} more hand-offs under way", "另有 {0} 个传递在途"),
    "flowcap.tail_dp": (
        "stages {0} all-reduce their gradients across DP replicas",
        "阶段 {0} 在各 DP 副本间 AllReduce 梯度",
    ),
    "flowcap.tail_dp_one": (
        "stage {0} all-reduces its gradients across DP replicas",
        "阶段 {0} 在各 DP 副本间 AllReduce 梯度",
    ),
    "flowcap.tail_optim": ("stages {0} run the optimizer step", "阶段 {0} 执行优化器更新"),
    "flowcap.tail_optim_one": ("stage {0} runs the optimizer step", "阶段 {0} 执行优化器更新"),
    "flowcap.idle_one": ("stage {0} waits (bubble)", "阶段 {0} 空等（气泡）"),
    "flowcap.idle_many": ("stages {0} wait (bubble)", "阶段 {0} 空等（气泡）"),
    "flowcap.done": ("the step is over", "本步结束"),
    "legend.title": ("How to read the timeline", "如何读这条时间线"),
    "legend.kinds": ("Blocks", "色块"),
    "legend.labels": ("Labels", "标签"),
    "legend.label_f": ("F3: forward of micro-batch 3", "F3：第 3 个微批次的前向"),
    "legend.label_b": (
        "B0.1: backward of micro-batch 0 on chunk 1 (the .1 appears when each GPU holds "
        "several chunks)",
        "B0.1：第 0 个微批次在模型块 1 上的反向（每张 GPU 持有多个模型块时才带 .1）",
    ),
    "legend.label_split": (
        "Zero-bubble schedules split the backward: B computes the input gradient, W the "
        "weight gradient, later, in a bubble",
        "零气泡调度把反向拆开：B 计算输入梯度，W 稍后在气泡里计算权重梯度",
    ),
    "legend.chunks": ("Chunk shades", "模型块深浅"),
    "legend.chunks_one": (
        "Each GPU holds one chunk of the model here, so every block has its kind's full colour.",
        "此处每张 GPU 只持有一个模型块，所以色块都是该类型的原色。",
    ),
    "legend.chunks_many": (
        "Interleaved and V schedules put several model chunks on each GPU; later chunks are "
        "lighter shades of the same kind:",
        "交错与 V 形调度在每张 GPU 上放多个模型块；编号越大的模型块颜色越浅：",
    ),
    "legend.chunks_v": (
        "In a V, chunk 0 runs down the pipeline and chunk 1 comes back up, so the last GPU "
        "holds the two middle chunks.",
        "在 V 形里，模型块 0 沿流水线向下，模型块 1 再折返向上，所以最后一张 GPU 持有中间的两块。",
    ),
    "legend.tp_ring": (
        "TP groups all-reducing, on the GPU grid",
        "GPU 网格上正在 AllReduce 的 TP 组",
    ),
    "legend.comm": ("Communication", "通信"),
    "legend.comm_pp": (
        "PP: an arrow from the producer's end to the consumer's start (bold while under way)",
        "PP：从产出方结束处指向接收方开始处的箭头（传递中加粗）",
    ),
    "legend.comm_tp": (
        "TP: the dark strip at the end of an F or B block, and the ring pulsing on the GPU grid",
        "TP：F 或 B 色块末端的深色细条，以及 GPU 网格上闪动的圆环",
    ),
    "legend.comm_dp": (
        "DP: the orange bar after the last backward; hatched when the backward hides it",
        "DP：最后一次反向之后的橙色条；被反向掩盖的部分画成斜线",
    ),
    "field.playing": ("playing", "播放中"),
}
