"""The article's tuning rules fire at their thresholds and carry the numbers."""

import pytest

from app.core.teach.advice import Breakdown, WhatIf, advise

CALM = dict(step_s=1.0, tp_s=0.1, dp_s=0.1, bubble_fraction=0.05, memory_ratio=0.5,
            microbatches=32, pp=4, tp=2, schedule="1f1b")  # fmt: skip


def rules(**change):
    return [a.rule for a in advise(Breakdown(**{**CALM, **change}))]


def test_a_healthy_step_gets_no_advice():
    assert rules() == []


def test_each_rule_fires_past_its_threshold_only():
    assert rules(tp_s=0.31) == ["tp_comm"] and rules(tp_s=0.29) == []
    assert rules(bubble_fraction=0.3) == ["bubble"] and rules(bubble_fraction=0.2) == []
    assert rules(dp_s=0.5) == ["dp_comm"]
    assert rules(memory_ratio=1.2) == ["oom"]
    assert rules(bubble_fraction=0.5, pp=1) == []  # no pipeline, no pipeline bubble


def test_messages_carry_numbers_in_both_languages():
    (a,) = advise(Breakdown(**{**CALM, "bubble_fraction": 0.4, "microbatches": 4}))
    assert "40%" in a.message and "16" in a.message
    assert "40%" in a.message_zh and "微批" in a.message_zh


GIB = 1 << 30
# A GPU of 80 GiB whose peak holds 60 GiB, 40 of them activations; full recompute would
# leave 4 GiB of activations (peak 24 GiB) for 1/3 more FLOPs.
MEM = dict(peak_bytes=60 * GIB, activations_bytes=40 * GIB, capacity_bytes=80 * GIB,
           memory_ratio=0.75, recompute="selective", tp_bytes=8 * GIB,
           full_recompute=WhatIf(24 * GIB, 4 * GIB, 12 * GIB, 4 / 3),
           bf16=WhatIf(40 * GIB, 20 * GIB, 4 * GIB))  # fmt: skip


def tips(**change):
    return {a.rule: a for a in advise(Breakdown(**{**CALM, **MEM, **change}))}


def test_recompute_is_advised_when_activations_dominate_with_its_cost():
    a = tips()["recompute"]
    assert "67%" in a.message and "40.0 GiB -> 4.0 GiB" in a.message and "33%" in a.message
    assert "Korthikanti" in a.message and "重计算" in a.message_zh and "33%" in a.message_zh
    assert "recompute" not in tips(activations_bytes=30 * GIB)  # half of 60 GiB: not dominant
    assert "recompute" not in tips(recompute="full")  # nothing left to recompute


def test_recompute_is_advised_when_it_turns_oom_into_a_fit():
    oom = dict(peak_bytes=100 * GIB, activations_bytes=40 * GIB, memory_ratio=1.25)
    a = tips(**oom)["recompute"]
    assert "40%" in a.message and "That fits" in a.message and "放进显存" in a.message_zh
    tight = WhatIf(90 * GIB, 30 * GIB, 0.0, 4 / 3)  # still over 80 GiB: no rescue, not dominant
    assert "recompute" not in tips(**oom, full_recompute=tight)


def test_mixed_precision_is_advised_for_fp32_only_with_its_numbers():
    a = tips(dtype="fp32", activations_bytes=20 * GIB)["mixed_precision"]
    assert "20.0 GiB -> 20.0 GiB" in a.message and "8.0 GiB -> 4.0 GiB" in a.message
    assert "60.0 GiB -> 40.0 GiB" in a.message and "Micikevicius" in a.message
    assert "混合精度" in a.message_zh and "8.0 GiB → 4.0 GiB" in a.message_zh
    assert "mixed_precision" not in tips(dtype="bf16") and "mixed_precision" not in tips()


def test_a_measured_breakdown_without_memory_numbers_gets_no_memory_tips():
    assert rules(memory_ratio=0.95) == []


def test_the_cost_model_feeds_the_tips_from_the_scenario():
    from app.core.evaluate import evaluate
    from app.core.inputs.scenario import Scenario

    def rules_of(**q):
        return [a["rule"] for a in evaluate(Scenario(**q))["advice"]]

    assert "mixed_precision" in rules_of(dtype="fp32")
    assert "mixed_precision" not in rules_of()
    assert "recompute" in rules_of(recompute="none", flash_attention=False)
    assert "recompute" not in rules_of() and "recompute" not in rules_of(recompute="full")
    assert "recompute" not in rules_of(schedule="naive", recompute="none", flash_attention=False)


def test_the_mixed_precision_tip_gives_the_tensor_core_rate_it_gains():
    from app.core.evaluate import evaluate
    from app.core.inputs.scenario import Scenario

    tip = next(
        a for a in evaluate(Scenario(dtype="fp32"))["advice"] if a["rule"] == "mixed_precision"
    )
    assert "2.0x TF32" in tip["message"] and "2.0 倍" in tip["message_zh"]  # h100: 989 / 494.5


def test_a_small_models_figures_are_not_rounded_to_zero_gib():
    # model=tiny in fp32 said "halves activations, 0.0 GiB -> 0.0 GiB (peak 0.0 GiB -> 0.0
    # GiB)": under a GiB the advice says MiB (or KiB), so the halving it advises shows.
    mib = 1 << 20
    small = dict(peak_bytes=22 * mib, activations_bytes=8.5 * mib, capacity_bytes=12 * GIB,
                 tp_bytes=0.0, bf16=WhatIf(17 * mib, 4.25 * mib, 0.0))  # fmt: skip
    a = tips(dtype="fp32", **small)["mixed_precision"]
    assert "8.5 MiB -> 4.2 MiB" in a.message and "(peak 22.0 MiB -> 17.0 MiB)" in a.message
    assert "0 B -> 0 B per step" in a.message and "0.0 GiB" not in a.message
    assert "8.5 MiB → 4.2 MiB" in a.message_zh


def by_rule(**change) -> dict:
    return {a.rule: a for a in advise(Breakdown(**{**CALM, **change}))}


def test_cp_rule_fires_past_its_share_with_the_numbers():
    a = by_rule(cp=4, cp_s=0.42)["cp_comm"]
    assert "42% of the step" in a.message and "fewer CP ranks (now 4)" in a.message
    assert "单步 42%" in a.message_zh and "当前 4" in a.message_zh
    assert "crosses nodes" not in a.message and "NVLink" not in a.message  # already inside one
    far = by_rule(cp=4, cp_s=0.42, cp_crosses_node=True)["cp_comm"]
    assert "42% of the step and crosses nodes" in far.message
    assert "keep each CP group inside one node's NVLink" in far.message
    assert "跨了节点" in far.message_zh and "CP 组留在同一节点" in far.message_zh
    assert rules(cp=4, cp_s=0.31) == ["cp_comm"] and rules(cp=4, cp_s=0.29) == []


def test_ep_rule_fires_past_its_share_with_the_numbers():
    a = by_rule(ep=8, ep_s=0.37)["ep_comm"]
    assert "over 8 ranks) is 37% of the step:" in a.message and "top-k" in a.message
    assert "capacity factor" in a.message and "--overlap-moe-expert-parallel-comm" in a.message
    assert "单步 37%" in a.message_zh and "8 个 GPU" in a.message_zh and "容量因子" in a.message_zh
    assert "NVLink" not in a.message
    far = by_rule(ep=8, ep_s=0.37, ep_crosses_node=True)["ep_comm"]
    assert "37% of the step and crosses nodes: keep each EP group inside" in far.message
    assert "EP 组留在同一节点" in far.message_zh
    assert rules(ep=8, ep_s=0.31) == ["ep_comm"] and rules(ep=8, ep_s=0.29) == []


def test_cp_and_ep_rules_are_silent_on_a_3d_step():
    # A 3D step (cp = ep = 1) gets what it got before, whatever seconds are put in its place.
    heavy = dict(tp_s=0.35, dp_s=0.4, bubble_fraction=0.3, microbatches=4)
    assert rules(**heavy, cp_s=0.5, ep_s=0.5) == rules(**heavy) == ["tp_comm", "bubble", "dp_comm"]
    assert rules(cp_s=0.9, ep_s=0.9) == []
    # Both past their shares: CP and EP follow TP, as Megatron-LM orders the axes.
    assert rules(tp_s=0.35, cp=2, cp_s=0.35, ep=2, ep_s=0.35)[:3] == [
        "tp_comm",
        "cp_comm",
        "ep_comm",
    ]


def _advised_on_sweep(base: dict, knob: str, values: str) -> list[tuple[float, dict]]:
    """Each point's CP or EP share as the sweep gives it, beside its scenario's advice."""
    from app.core.evaluate import evaluate
    from app.core.evaluate import sweep as sw
    from app.core.inputs.scenario import Scenario

    params = sw.SweepParams(series="none", knob=knob, values=values)
    pts = sw.sweep(Scenario.model_validate(base), params)["lines"][0]["points"]
    out = []
    for p in pts:
        advice = evaluate(Scenario.model_validate(p["query"]))["advice"]
        out.append((p[f"{knob}_share"], {a["rule"]: a for a in advice}))
    return out


def test_the_cost_model_feeds_the_cp_rule_the_sweeps_cp_share():
    # One GPU a node: the ring crosses nodes; 32k tokens. cp 2 hides the ring, cp 8 does not.
    base = {"model": "llama3.2-3b", "hardware": "b200", "seq_len": 32768, "tp": 1, "pp": 1,
            "gpus_per_node": 1}  # fmt: skip
    (low, calm), (high, heavy) = _advised_on_sweep(base, "cp", "2,8")
    assert low < 0.30 and "cp_comm" not in calm
    cp = heavy["cp_comm"]
    assert high > 0.30 and f"is {high:.0%} of the step and crosses nodes" in cp["message"]
    assert "(now 8)" in cp["message"] and f"单步 {high:.0%}" in cp["message_zh"]


def test_the_cost_model_feeds_the_ep_rule_the_sweeps_ep_share():
    base = {"model": "qwen3-30b-a3b", "dp": 8, "tp": 1, "pp": 1, "gpus_per_node": 1}
    ((share, said),) = _advised_on_sweep(base, "ep", "8")
    ep = said["ep_comm"]
    assert share > 0.30 and f"over 8 ranks) is {share:.0%} of the step and crosses" in ep["message"]
    assert f"单步 {share:.0%}" in ep["message_zh"]


@pytest.mark.parametrize(
    "q",
    [{}, {"tp": 8, "gpus_per_node": 4, "pp": 4, "microbatches": 4},
     {"model": "mixtral-8x7b", "dp": 8, "tp": 1, "pp": 1},  # experts, but ep = 1
     {"model": "llama3.2-3b", "seq_len": 32768, "cp": 4, "cp_comm": "allgather"}],  # no ring
)  # fmt: skip
def test_a_scenario_without_a_cp_ring_or_ep_gives_the_rules_no_cp_or_ep_time(q):
    """Its Breakdown keeps the CP and EP defaults: its advice is what it was before them."""
    from app.core.evaluate.one_scenario import prepare
    from app.core.inputs import specs
    from app.core.inputs.scenario import Scenario
    from app.core.views.prediction import axis_comm

    s = Scenario(**q)
    layout, _, cost = prepare(s)
    hw, m = specs.hardware_of(s), specs.model_of(s)
    assert axis_comm(s, m, hw, layout, cost.training, cost.pipeline) == {}
