"""Context parallelism in the memory model: each CP rank keeps the activations of its s/cp
tokens (Megatron-LM docs/user-guide/features/context_parallel.md), so cp never raises
activation memory, and divides it exactly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario


def _activations(**q: object) -> list[float]:
    model = evaluate(Scenario.model_validate(q), lean=True)
    return [s["activations_bytes"] for s in model["memory"]["per_stage"]]


@settings(max_examples=10, deadline=None)
@given(
    cp=st.sampled_from([2, 4, 8]),
    tp=st.sampled_from([1, 2]),
    pp=st.sampled_from([1, 2]),
    recompute=st.sampled_from(["none", "selective", "full"]),
    mbs=st.sampled_from([1, 2]),
)
def test_cp_never_raises_activation_memory(cp, tp, pp, recompute, mbs):
    base = dict(dp=1, tp=tp, pp=pp, recompute=recompute, micro_batch_size=mbs, microbatches=4)
    flat, split = _activations(**base), _activations(**base, cp=cp)
    assert all(b <= a for a, b in zip(flat, split, strict=True))
    # Korthikanti et al. 2022 Table 2 with s -> s/cp: exactly 1/cp of each stage's share.
    assert all(abs(b * cp - a) <= 1e-9 * a for a, b in zip(flat, split, strict=True))
