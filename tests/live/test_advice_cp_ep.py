"""The run analysis's advice reads a measured run's CP and EP time: a step whose CP ring
exchange or EP all-to-all takes a large share says so, with the share the table of where the
step went shows, and a 3D run gets word for word the advice it got before CP and EP rules."""

from __future__ import annotations

from cp_ep_support import cp_ep_info, cp_ep_records
from support import run_info

from app.core.fidelity import measured
from app.live import analysis


def _stretched(info, kind: str, seconds: float) -> list:
    """cp_ep_records with every ``kind`` exchange lasting ``seconds``: a slow CP ring or EP
    all-to-all on every rank, each rank's compute as before."""
    out = []
    for r in cp_ep_records(info, 0, t0=0.0):
        events = [e.model_copy(update={"end": e.start + seconds}) if e.kind == kind else e
                  for e in r.events]  # fmt: skip
        out.append(r.model_copy(update={"events": events}))
    return out


def _advice(info, records) -> tuple[dict, dict]:
    a = analysis.analyse(info, records, 0)
    mean = a["shares"]["mean"]
    return {x["rule"]: x for x in a["advice"]}, mean


def test_a_measured_cp_heavy_run_gets_the_cp_advice():
    info = cp_ep_info("cpheavy", dp=2, tp=1, pp=2, cp=2, ep=1, steps=1)
    said, mean = _advice(info, _stretched(info, "cp", 0.020))  # 2 x 20 ms of a ~63 ms step
    share = mean["cp_s"] / mean["step_time_s"]
    assert share > 0.5
    cp = said["cp_comm"]
    assert f"is {share:.0%} of the step:" in cp["message"] and "(now 2)" in cp["message"]
    assert f"单步 {share:.0%}" in cp["message_zh"] and "当前 2" in cp["message_zh"]
    assert "ep_comm" not in said
    # The same run with its 2 ms exchanges (~6% of the step): no CP advice.
    calm, _ = _advice(info, cp_ep_records(info, 0, t0=0.0))
    assert "cp_comm" not in calm


def test_a_measured_ep_heavy_run_gets_the_ep_advice():
    info = cp_ep_info("epheavy", dp=2, tp=1, pp=2, cp=1, ep=2, steps=1)
    said, mean = _advice(info, _stretched(info, "ep", 0.015))  # 2 x 15 ms of a ~63 ms step
    share = mean["ep_s"] / mean["step_time_s"]
    assert share > 0.3
    ep = said["ep_comm"]
    assert f"over 2 ranks) is {share:.0%} of the step:" in ep["message"]
    assert f"单步 {share:.0%}" in ep["message_zh"] and "cp_comm" not in said


def test_a_3d_runs_advice_is_word_for_word_as_before():
    """advice_json's answer for a 3D run, pinned from before the CP and EP rules existed."""
    info = run_info("m", dp=2, tp=4, pp=4, m=4).model_copy(update={"gpus_per_node": 2})
    b = [
        measured.RankBreakdown(rank=r, stage=0, step=0, attempt=0, step_time_s=1.0,
                               compute_s=0.1, tp_s=0.35, dp_s=0.31, pp_wait_s=0.24, host_s=0.0)
        for r in range(2)
    ]  # fmt: skip
    assert analysis.advice_json(info, analysis.layout_of(info), b) == BEFORE


BEFORE = [
    {"rule": "tp_comm",
     "message": "TP communication is 35% of the step and crosses nodes: reduce TP (now 4) and "
                "keep each TP group inside one node's NVLink.",
     "message_zh": "TP 通信占单步 35%，而且跨了节点：减小 TP（当前 4），让 TP 组留在同一节点的"
                   " NVLink 内——拆得越细，工人之间传话越多。"},
    {"rule": "bubble",
     "message": "The pipeline bubble is 24%: raise micro-batches from 4 to at least 16 (m >= 4p), "
                "or use the interleaved schedule.",
     "message_zh": "流水线气泡占 24%：把微批数从 4 提高到至少 16（m ≥ 4p），或改用交错"
                   "（interleaved）调度，让传送带上别空着。"},
    {"rule": "dp_comm",
     "message": "The DP gradient all-reduce is 31% of the step: accumulate more micro-batches per "
                "step (gradient accumulation) so each all-reduce is amortised, or overlap it.",
     "message_zh": "DP 梯度同步占单步 31%：用梯度累积，每步多攒几个微批再同步一次，"
                   "或让同步与反向计算重叠。"},
]  # fmt: skip
