"""The article's tuning rules fire at their thresholds and carry the numbers."""

from app.core.advice import Breakdown, advise

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
