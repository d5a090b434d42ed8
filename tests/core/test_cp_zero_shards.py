"""ZeRO under context parallelism shards over the data-parallel ranks and their CP ranks,
which hold the same weights (Megatron-LM's data-parallel group "with context parallel";
torchtitan's FSDP mesh dp_shard_cp): dp x cp ranks hold what dp·cp plain DP ranks hold."""

from __future__ import annotations

import pytest

from app.core.cost import comm
from app.core.evaluate import evaluate, prepare
from app.core.inputs.scenario import Scenario

STATES = ("weights_bytes", "grads_bytes", "optimizer_bytes")


def _stage0(**q: object) -> dict:
    return evaluate(Scenario.model_validate(q), lean=True)["memory"]["per_stage"][0]


@pytest.mark.parametrize("zero", [1, 2, 3])
@pytest.mark.parametrize("dp,cp", [(1, 2), (2, 2), (1, 8), (2, 4)])
def test_states_per_gpu_are_those_of_dp_times_cp_plain_ranks(zero, dp, cp):
    base = dict(tp=2, pp=2, zero=zero, microbatches=4, gpus_per_node=8)
    with_cp, plain = _stage0(**base, dp=dp, cp=cp), _stage0(**base, dp=dp * cp)
    for key in STATES:
        assert with_cp[key] == pytest.approx(plain[key]), key
    # And fewer than the same dp alone would hold: cp never raises the states.
    alone = _stage0(**base, dp=dp)
    assert with_cp["optimizer_bytes"] < alone["optimizer_bytes"]


def test_zero3_gathers_and_reduces_over_dp_times_cp():
    q = dict(tp=1, pp=1, zero=3, microbatches=4, gpus_per_node=8)
    s = Scenario.model_validate({**q, "dp": 2, "cp": 4})
    layout, _, cost = prepare(s)
    place = comm.grad_placement(layout, 8)
    assert place.size == 8
    # The bytes a rank moves for ZeRO-3 are those of 8 plain DP ranks: (n-1)/n, n = dp x cp.
    plain = prepare(Scenario.model_validate({**q, "dp": 8}))[2]
    got = cost.sections["comm"]["dp_bytes"]
    assert got == pytest.approx(plain.sections["comm"]["dp_bytes"])
