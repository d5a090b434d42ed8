"""Strings of the self-test (/quiz) and the article's demo panel, in English and Chinese.

``translator(lang)`` is the app's table plus this one, for the pages that show these.
"""

from __future__ import annotations

from app import i18n
from app.i18n_quiz_questions import QUESTIONS

PAGE: dict[str, tuple[str, str]] = {
    "quiz.title": ("Self-test: misconceptions and interview questions", "自测：常见误区与面试题"),
    "quiz.intro": (
        "Each question comes from the article's closing sections. Answer, read the reasoning, "
        "then open the scenario that proves it. Your answers live in the address bar: copy the "
        "link to share a set or keep your place.",
        "题目来自原文的最后两节。先作答，再读解析，然后打开能证明答案的场景。"
        "作答记录保存在地址栏里：复制链接即可分享一组题，或者下次接着做。",
    ),
    "quiz.myth": ("Common misconceptions: true or false?", "常见误区：对还是错？"),
    "quiz.interview": ("Interview questions", "面试题"),
    "quiz.true": ("True", "对"),
    "quiz.false": ("False", "错"),
    "quiz.right": ("Right.", "答对了。"),
    "quiz.wrong": ("Not quite.", "不对。"),
    "quiz.answer": ("Answer:", "答案："),
    "quiz.see": ("See it:", "动手验证："),
    "quiz.progress": (
        "{answered} of {total} answered, {correct} right",
        "已答 {answered} / {total} 题，答对 {correct} 题",
    ),
    "quiz.reset": ("Start over", "重新开始"),
    "quiz.all": ("Show all questions", "显示全部题目"),
    "quiz.share": (
        "A teacher can pick questions with only=1,3,5 in the link; answers=3b,5a records picks "
        "(question number, choice letter).",
        "老师可以在链接里用 only=1,3,5 选题；answers=3b,5a 记录作答（题号加选项字母）。",
    ),
    "quiz.toc": ("Questions", "题目"),
    "quiz.link.factory": (
        "DP vs TP vs PP vs 3D on the same GPUs",
        "同样 GPU 上的 DP、TP、PP 与 3D",
    ),
    "quiz.link.dp_state": ("DP=1 vs DP=4: per-GPU memory", "DP=1 与 DP=4：每卡显存"),
    "quiz.link.tp_node": (
        "TP=8 in one node vs TP=16 over two",
        "TP=8 在一个节点内与 TP=16 跨两个节点",
    ),
    "quiz.link.gpipe_1f1b": (
        "GPipe vs 1F1B: bubble and in-flight memory",
        "GPipe 与 1F1B：气泡与在途显存",
    ),
    "quiz.link.pp_depth": ("2 stages vs 8 stages, 8 micro-batches", "2 段与 8 段流水线，8 个微批"),
    "quiz.link.trend_pp": ("Sweep the number of stages", "扫描流水线段数"),
    "quiz.link.accum": ("DP=4 × 4 micro-batches vs DP=2 × 8", "DP=4 × 4 个微批与 DP=2 × 8 个微批"),
    "quiz.link.article": ("The article's demo: DP=2 × TP=2 × PP=2", "原文演示：DP=2 × TP=2 × PP=2"),
    "quiz.link.more_m": ("GPipe with 4 vs 16 micro-batches", "GPipe 4 个微批与 16 个微批"),
    "quiz.link.dtype": ("FP32 vs BF16: the memory stack", "FP32 与 BF16：显存构成"),
    "quiz.link.node": (
        "TP=8 per node, PP=8 across nodes, DP=2",
        "TP=8 占满节点，PP=8 跨节点，DP=2",
    ),
    "quiz.link.gpu5": ("GPU5 selected in the article's demo", "在原文演示中选中 GPU5"),
    "quiz.link.interleaved": ("1F1B vs interleaved (v = 2)", "1F1B 与交错调度（v = 2）"),
    "quiz.link.trend_tp": ("Sweep TP from 1 to 16", "TP 从 1 扫到 16"),
    "art.title": ("The article's demo: simulate_3d_parallel", "原文演示：simulate_3d_parallel"),
    "art.intro": (
        "The article's ParallelConfig(dp={dp}, tp={tp}, pp={pp}) with {m} micro-batches, in "
        "teaching units: every forward takes 1 time unit and hops are free, so the timeline moves "
        "in the article's lock-step time steps.",
        "原文的 ParallelConfig(dp={dp}, tp={tp}, pp={pp})，{m} 个微批，使用教学时间单位："
        "每个前向耗时 1 个单位，传递不耗时，所以时间轴按原文的时间步整齐推进。",
    ),
    "art.printout": ("Every GPU, as the article prints it", "逐卡打印（与原文一致）"),
    "art.gpu": ("GPU", "GPU"),
    "art.coord": ("coordinate", "坐标"),
    "art.sync": ("gradient-sync group", "梯度同步组"),
    "art.down": ("pipeline downstream", "流水线下游"),
    "art.steps": (
        "Pipeline schedule: active GPUs per time step",
        "流水线调度（按时间步观察活跃GPU）",
    ),
    "art.step": ("time step {n}: active GPUs = {ranks}", "时间步{n}：活跃GPU={ranks}"),
    "art.steps.note": (
        "Read off the simulated timeline: the first and last steps use half the GPUs, the bubble "
        "(p−1)/(m+p−1) = {bubble}.",
        "取自模拟的时间轴：第一步和最后一步只有一半 GPU 在干活，这就是气泡 (p−1)/(m+p−1) = "
        "{bubble}。",
    ),
    "art.path": ("Grow it the way the article does", "沿着原文的思路逐步扩展"),
    "art.here": ("you are here", "当前位置"),
    "art.path.demo": ("The demo: naive forwards in lock step", "演示：朴素调度，前向齐步走"),
    "art.path.1f1b": ("1F1B: one forward, one backward", "1F1B：一个前向紧跟一个反向"),
    "art.path.interleaved": (
        "Interleaved: 2 virtual stages per GPU",
        "交错调度：每卡 2 个虚拟阶段",
    ),
    "art.path.node": (
        "TP=8 fills a node, PP=8 across nodes, DP=2",
        "TP=8 占满单节点 NVLink，PP=8 跨节点，DP=2",
    ),
    "art.quiz": ("Test yourself on it", "做一做自测题"),
}

QUIZ: dict[str, tuple[str, str]] = {**PAGE, **QUESTIONS}


def strings(lang: str) -> dict[str, str]:
    """This table in one language, under the app's own (which wins on a shared key)."""
    i = i18n.LANGS.index(lang)
    return {**{k: pair[i] for k, pair in QUIZ.items()}, **i18n.strings(lang)}


def translator(lang: str):
    table = strings(lang)
    return lambda key: table.get(key, key)
