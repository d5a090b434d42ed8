"""Strings of the accuracy board (/fidelity) and of the error band every page shows beside a
predicted step time, in English and Chinese."""

from __future__ import annotations

FIDELITY: dict[str, tuple[str, str]] = {
    "nav.fidelity": ("Accuracy", "准确度"),
    "fid.title": (
        "How close the model is to published, measured runs",
        "成本模型与公开实测训练的差距",
    ),
    "fid.intro": (
        "Each published training run below is the scenario its source describes (model "
        "shape, GPUs, TP, PP, DP, schedule, micro-batch, recompute, precision), predicted with "
        "one set of constants per GPU generation; nothing is tuned per row. The flat baseline "
        "is model FLOPs / (GPUs × peak × 0.5). Error = (predicted − published) / published: "
        "positive means the model predicts a slower step than was measured.",
        "下表每一行都是一次公开发表的实测训练，按其来源描述的配置（模型结构、GPU 数、TP、PP、DP、"
        "调度、微批、重计算、精度）建成场景，用每代 GPU 一套常数预测，不针对任何一行调参。"
        "对照基线为 模型 FLOPs ÷（GPU 数 × 峰值 × 0.5）。误差 =（预测 − 实测）÷ 实测，"
        "正值表示模型预测的单步比实测慢。",
    ),
    "fid.toc": ("On this page", "本页内容"),
    "fid.toc.summary": ("Summary", "汇总"),
    "fid.toc.sources": ("By source", "按来源"),
    "fid.toc.kinds": ("Error bands", "误差带"),
    "fid.toc.rows": ("Predicted runs", "已预测的实测"),
    "fid.toc.left": ("Left out", "未纳入的行"),
    "fid.api": ("The same numbers as JSON", "同样的数据（JSON）"),
    "fid.aside.note": (
        "Every predicted step time in this app shows the band of its kind of configuration, "
        "taken from these rows.",
        "本应用中每个预测的单步时间旁，都会显示同类配置的误差带，数据取自这些行。",
    ),
    "fid.model": ("this model", "本模型"),
    "fid.baseline": ("flat 50% of peak", "固定 50% 峰值"),
    "fid.baseline_is": ("flat 50% of peak: {v}", "固定 50% 峰值：{v}"),
    "fid.card.median": ("Median |error|", "误差绝对值中位数"),
    "fid.card.max": ("Max |error|", "误差绝对值最大值"),
    "fid.card.within": ("Within 10%", "误差在 10% 以内"),
    "fid.card.runs": ("Runs predicted", "已预测的实测数"),
    "fid.of": ("{n} of {total}", "{n} / {total}"),
    "fid.runs_note": (
        "{left} more are kept in the data and left out, with the reason below.",
        "另有 {left} 行保留在数据中但未纳入预测，原因见下文。",
    ),
    "fid.sources.title": ("By source family", "按来源分组"),
    "fid.col.family": ("source", "来源"),
    "fid.col.rows": ("rows", "行数"),
    "fid.col.median": ("median |error|", "误差中位数"),
    "fid.col.max": ("max |error|", "最大误差"),
    "fid.col.within": ("within 10%", "10% 以内"),
    "fid.kinds.title": ("Error bands by kind of configuration", "按配置类别的误差带"),
    "fid.kinds.hint": (
        "A kind is the GPU generation, which axes are above 1 and whether DP shards the model "
        "(ZeRO-3 / FSDP). A scenario shows the band of its kind; with fewer than {min} rows of "
        "that kind, the band of its whole generation.",
        "类别由 GPU 代际、哪些并行维度大于 1、以及 DP 是否切分模型（ZeRO-3 / FSDP）决定。"
        "场景显示其类别的误差带；若该类别不足 {min} 行，则显示整个代际的误差带。",
    ),
    "fid.col.generation": ("GPU generation", "GPU 代际"),
    "fid.col.axes": ("axes > 1", "大于 1 的维度"),
    "fid.col.zero3": ("ZeRO-3 / FSDP", "ZeRO-3 / FSDP"),
    "fid.col.level": ("band from", "误差带取自"),
    "fid.level.kind": ("rows of this kind", "同类别的行"),
    "fid.level.generation": ("the whole generation", "整个代际"),
    "fid.level.all": ("every row", "全部行"),
    "fid.gen.ampere": ("Ampere (A100)", "Ampere 架构（A100）"),
    "fid.gen.hopper": ("Hopper (H100, H200, H800)", "Hopper 架构（H100、H200、H800）"),
    "fid.axes.none": ("— (all 1)", "—（均为 1）"),
    "fid.yes": ("yes", "是"),
    "fid.no": ("no", "否"),
    "fid.rows.title": ("Predicted runs", "已预测的实测"),
    "fid.rows.hint": (
        "Click a column heading to sort by it (again to reverse); open a row to see its scenario.",
        "点击列标题按该列排序（再点一次反向）；点“打开”查看该行的场景。",
    ),
    "fid.col.source": ("source", "来源"),
    "fid.col.model": ("model", "模型"),
    "fid.col.hardware": ("hardware", "硬件"),
    "fid.col.gpus": ("GPUs", "GPU 数"),
    "fid.col.schedule": ("schedule (v)", "调度（v）"),
    "fid.col.micro": ("micro-batch × global", "微批 × 全局批"),
    "fid.col.recompute": ("recompute", "重计算"),
    "fid.col.precision": ("precision", "精度"),
    "fid.col.published": ("published", "实测"),
    "fid.col.predicted": ("predicted", "预测"),
    "fid.col.baseline": ("flat 50%", "固定 50%"),
    "fid.col.error": ("error", "误差"),
    "fid.col.baseline_error": ("flat 50% error", "基线误差"),
    "fid.col.open": ("scenario", "场景"),
    "fid.col.reason": ("why it is left out", "未纳入原因"),
    "fid.open": ("open", "打开"),
    "fid.sorted": ("sorted", "已排序"),
    "fid.left.title": ("Left out, with the reason", "未纳入预测的行及原因"),
    "fid.left.hint": (
        "Kept in the data and predicted once the model grows the feature.",
        "这些行保留在数据中，待模型支持相应特性后即纳入预测。",
    ),
    "fid.reason.fp8": ("FP8 is not modelled", "尚未对 FP8 建模"),
    "fid.reason.cp": ("context parallelism is not modelled", "尚未对上下文并行（CP）建模"),
    "fid.reason.no_profile": ("no hardware profile for this GPU", "没有该 GPU 的硬件配置"),
    "fid.reason.no_vpp": ("interleave depth not published", "来源未公布交错深度"),
    "fid.reason.no_batch": ("global batch not published", "来源未公布全局批大小"),
    "fid.reason.not_expressible": (
        "the scenario cannot express this configuration",
        "场景无法表达该配置",
    ),
    "fid.reason.other": ("left out", "未纳入"),
    "band.kind": (
        "median of {n} published runs like this; max {max}",
        "{n} 次同类公开实测的误差中位数；最大 {max}",
    ),
    "band.generation": (
        "median of {n} published {gen} runs (too few like this); max {max}",
        "{n} 次 {gen} 公开实测的误差中位数（同类太少）；最大 {max}",
    ),
    "band.all": (
        "median of all {n} published runs; max {max}",
        "全部 {n} 次公开实测的误差中位数；最大 {max}",
    ),
    "band.gen.ampere": ("Ampere (A100)", "Ampere 架构（A100）"),
    "band.gen.hopper": ("Hopper", "Hopper 架构"),
    "band.on": ("measured on {hardware}", "实测硬件为 {hardware}"),
    "band.none.hardware": ("not validated on this hardware", "尚未在此硬件上验证"),
    "band.none.overrides": (
        "not validated: custom hardware figures",
        "未验证：使用了自定义硬件参数",
    ),
    "band.link": ("accuracy board", "准确度看板"),
    "band.title": (
        "The model's error on published runs of this kind",
        "模型在同类公开实测上的误差",
    ),
}
