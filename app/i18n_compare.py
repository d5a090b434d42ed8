"""Strings of the comparison view (/compare), in English and Chinese."""

from __future__ import annotations

COMPARE: dict[str, tuple[str, str]] = {
    "nav.compare": ("Compare", "对比"),
    "cmp.title": ("Scenarios side by side", "场景并排对比"),
    "cmp.intro": (
        "Back to the small workshop: copying the whole line (DP) cannot fit parts that do not "
        "fit on one line; splitting every job among workers (TP) cannot keep up with a flood "
        "of orders once they stand in different buildings; splitting into workshops (PP) alone "
        "leaves every station slow and waiting. Layered together, the three break the memory "
        "wall and the compute wall at once: TP and PP split the weights and layers, DP runs "
        "many lines in parallel.",
        "回到小作坊的比喻：只复制生产线（DP）解决不了单条线放不下零件的问题；只分工（TP）解决不了"
        "要同时处理海量订单的问题，师傅们一旦分散到不同厂房，递工具就得绕远路；只分车间（PP）每个"
        "环节仍然太慢，还要互相等料。三层错落叠加，才把“装不下”和“跑得慢”一起攻破——显存墙靠 TP "
        "拆权重、PP 拆层数，算力墙靠 DP 多线并行。",
    ),
    "cmp.presets": ("Built-in comparisons", "内置对比"),
    "cmp.preset.factory": ("DP vs TP vs PP vs 3D", "DP、TP、PP 与 3D 对比"),
    "cmp.preset.factory.hint": (
        "Same GPUs, model and global batch, split four ways.",
        "同样的 GPU、模型和全局批量，四种切法。",
    ),
    "cmp.preset.schedules": ("Every pipeline schedule", "全部流水线调度"),
    "cmp.preset.schedules.hint": (
        "One configuration under every schedule: bubble, peak activations, p2p volume.",
        "同一配置跑全部调度：气泡、激活峰值、点对点通信量。",
    ),
    "cmp.base": ("Base scenario of the preset", "预设的基准场景"),
    "cmp.base.hint": (
        "The preset is built from this scenario; editing a column turns the page into a "
        "custom comparison.",
        "预设由这个场景生成；修改某一列后，页面变为自定义对比。",
    ),
    "cmp.custom.hint": (
        "Custom comparison: edit each column. A preset button takes column 1 as its base.",
        "自定义对比：逐列修改参数。点预设按钮会以第 1 列为基准。",
    ),
    "cmp.add": ("Add scenario", "添加场景"),
    "cmp.remove": ("Remove", "移除"),
    "cmp.open.overview": ("open in overview", "在概览中打开"),
    "cmp.open.flow": ("open in flow", "在流程中打开"),
    "cmp.more": ("other parameters (query)", "其他参数（查询串）"),
    "cmp.pick": ("pick", "选中"),
    "cmp.pick.go": ("Compare the picked (2–4)", "对比选中的（2–4 个）"),
    "cmp.pick.hint": (
        "Too many columns to edit: pick 2 to 4 of them to compare and edit.",
        "列数太多，无法逐列编辑：选中其中 2 到 4 个再对比和修改。",
    ),
    "cmp.invalid": ("Cannot run", "无法运行"),
    "cmp.best": ("fastest that fits", "能放下且最快"),
    "cmp.role.dp_only": ("DP only: copy the line", "只用 DP：复制生产线"),
    "cmp.role.tp_only": ("TP only: split every job", "只用 TP：每道工序分工"),
    "cmp.role.pp_only": ("PP only: workshops in a row", "只用 PP：分车间"),
    "cmp.role.3d": ("3D: DP × TP × PP", "3D：DP × TP × PP"),
    "cmp.role.2d": ("2D mix", "二维组合"),
    "cmp.role.single": ("one GPU", "单卡"),
    "cmp.teach.dp_only": (
        "Copying the line (DP) does not shrink it: every GPU still holds the whole model, its "
        "gradients and optimizer state.",
        "只复制生产线（DP）不会让生产线变小：每张卡仍要装下完整模型、梯度和优化器状态。",
    ),
    "cmp.teach.tp_only": (
        "Splitting every job (TP) halves memory well, but the workers hand tools over at every "
        "layer; stretched past one node they shout across the network.",
        "只分工（TP）能很好地分摊显存，但师傅们每一层都要递工具、对尺寸；拆到跨节点后，"
        "只能隔着网络喊话。",
    ),
    "cmp.teach.pp_only": (
        "Only workshops (PP): each station is one GPU, so every step stays slow, and the belt "
        "idles while it fills and drains (the bubble); many items in flight cost activations.",
        "只分车间（PP）：每个工位只有一张卡，每个环节仍然太慢；传送带开工和收工时空转（气泡），"
        "在途的半成品越多，激活显存越高。",
    ),
    "cmp.teach.3d": (
        "All three layered: TP fills a node's NVLink, PP spans nodes, DP copies the line for "
        "throughput.",
        "三层叠加：TP 占满节点内 NVLink，PP 跨节点分阶段，DP 复制生产线提高吞吐。",
    ),
    "cmp.teach.schedules": (
        "Same factory, different belt rules. GPipe runs every forward first and holds every "
        "item in flight; 1F1B sends each item back as soon as it can, capping what is held at "
        "p; interleaved cuts each workshop into chunks so the belt fills faster but passes "
        "items more often; zero-bubble schedules split the backward and fill the waits with "
        "weight-gradient work.",
        "同一座工厂，换一套传送带规则。GPipe 先做完所有前向，所有半成品都压在手里；1F1B 能回传就"
        "立刻回传，在途数量封顶为 p；交错调度把车间再切成小块，传送带更快填满，但传递次数更多；"
        "零气泡调度把反向拆开，用权重梯度的活填满等待。",
    ),
    "cmp.why": ("Why", "原因"),
    "cmp.why.oom": (
        "Out of memory: the fullest GPU needs {peak_bytes}, {ratio} of its {capacity_bytes}; "
        "weights, gradients and optimizer alone take {state_bytes}, activations "
        "{activations_bytes}.",
        "显存不足：最满的卡需要 {peak_bytes}，是容量 {capacity_bytes} 的 {ratio}；其中权重、梯度和"
        "优化器就占 {state_bytes}，激活 {activations_bytes}。",
    ),
    "cmp.why.tp_inter": (
        "Each TP group spans {nodes} nodes: every layer's all-reduce crosses the network, "
        "{share} of the step.",
        "每个 TP 组横跨 {nodes} 个节点：每层的 AllReduce 都要走网络，占单步 {share}。",
    ),
    "cmp.why.tp_share": (
        "TP all-reduce takes {share} of the step.",
        "TP AllReduce 占单步 {share}。",
    ),
    "cmp.why.bubble": (
        "Bubble: {fraction} of the pipeline time is idle (m = {m} micro-batches, p = {p} stages).",
        "气泡：流水线时间中 {fraction} 在空等（m = {m} 个微批，p = {p} 个阶段）。",
    ),
    "cmp.why.dp_share": (
        "The DP gradient all-reduce takes {share} of the step.",
        "DP 梯度 AllReduce 占单步 {share}。",
    ),
    "cmp.why.best": (
        "Most tokens/s of the scenarios that fit in memory.",
        "在显存放得下的场景中，tokens/秒 最高。",
    ),
    "cmp.why.forward_only": (
        "Forward passes only (the article's demo), so not a training step: left out of the "
        "ranking.",
        "只有前向（文章的演示），不是完整的训练步：不参与排名。",
    ),
    "cmp.why.slower": (
        "Throughput is {share} of the fastest that fits.",
        "吞吐为能放下的最快方案的 {share}。",
    ),
    "cmp.why.tie": (
        "Ties the fastest that fits (within 0.5% of its tokens/s).",
        "与能放下的最快方案持平（tokens/秒 相差不到 0.5%）。",
    ),
    "cmp.s.global_batch": ("global batch (sequences)", "全局批量（序列数）"),
    "cmp.s.bubble": ("bubble, share of pipeline time", "气泡（占流水线时间）"),
    "cmp.s.bubble_ideal": ("bubble, over ideal time", "气泡（相对理想时间）"),
    "cmp.s.peak_inflight": ("peak micro-batches in flight", "在途微批峰值"),
    "cmp.s.peak_act": ("peak activations per GPU", "每卡激活峰值"),
    "cmp.s.p2p": ("PP p2p bytes per GPU per step", "每卡每步 PP 点对点字节"),
    "cmp.s.memory": ("peak memory / HBM", "显存峰值 / 容量"),
    "cmp.timelines": ("Timelines on one time scale", "同一时间轴上的时间线"),
    "cmp.timelines.hint": (
        "Every timeline shares the x axis, so a longer bar row is a slower step.",
        "所有时间线共用横轴：越长越慢。",
    ),
    "cmp.timelines.mixed": (
        "These timelines are in different units (seconds and teaching units): each has its "
        "own scale.",
        "这些时间线单位不同（秒与教学单位），各用各的刻度。",
    ),
    "cmp.timeline.omitted": (
        "Too many blocks to draw side by side; open this scenario in the flow view.",
        "块太多，无法并排绘制；请在流程视图中打开该场景。",
    ),
    "cmp.memory": ("Memory per GPU by stage, against HBM", "各阶段每卡显存与容量"),
    "cmp.comm": ("Bytes per GPU per step, by axis and link", "每卡每步通信字节（按维度与链路）"),
    "cmp.comm.hint": (
        "Hatched bars cross a node boundary (network); solid bars stay inside a node (NVLink).",
        "斜线条跨越节点边界（走网络）；实心条留在节点内（NVLink）。",
    ),
    "cmp.metrics": ("Predicted step time, MFU and tokens/s", "预测的单步时间、MFU 与 tokens/秒"),
    "cmp.diff": ("What changed", "改了什么"),
    "cmp.diff.hint": (
        "The parameters that differ, then the layout they imply; highlighted rows differ.",
        "先列出不同的参数，再列出它们带来的布局变化；高亮行表示有差异。",
    ),
    "cmp.diff.param": ("parameter", "参数"),
    "cmp.diff.world_size": ("GPUs (world size)", "GPU 总数"),
    "cmp.diff.nodes": ("nodes", "节点数"),
    "cmp.diff.crosses_node.tp": ("TP groups cross nodes", "TP 组跨节点"),
    "cmp.diff.crosses_node.pp": ("PP groups cross nodes", "PP 组跨节点"),
    "cmp.diff.crosses_node.dp": ("DP groups cross nodes", "DP 组跨节点"),
    "cmp.diff.nodes_spanned.tp": ("nodes one TP group spans", "一个 TP 组横跨的节点数"),
    "cmp.diff.nodes_spanned.pp": ("nodes one PP group spans", "一个 PP 组横跨的节点数"),
    "cmp.diff.nodes_spanned.dp": ("nodes one DP group spans", "一个 DP 组横跨的节点数"),
    "cmp.yes": ("yes", "是"),
    "cmp.no": ("no", "否"),
    "cmp.error.fix": (
        "Nothing to compare until the parameters listed above are fixed; or start from a "
        "built-in comparison.",
        "请先修正上面列出的参数，或从内置对比重新开始。",
    ),
}
