"""tp_comm_overlap (Megatron's --tp-comm-overlap): the TP collectives pipelined with their
GEMMs show only one piece of tp, or what outlasts the GEMM; Megatron refuses it without
sequence parallelism, and so do we (422 naming the field)."""

from __future__ import annotations

import pytest

from app.core.cost.overlap import exposed_tp_s
from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario, ScenarioError

BASE = {"model": "llama3-70b", "tp": 8, "pp": 2, "dp": 1, "microbatches": 8,
        "sequence_parallel": True, "hardware": "h100-sxm"}  # fmt: skip


def step(**kw):
    return evaluate(Scenario(**(BASE | kw)))


def test_exposed_tp_time_is_one_piece_or_what_outlasts_the_gemm():
    assert exposed_tp_s(8.0, 100.0, 8) == 1.0  # the GEMM hides all but one piece of 8
    assert exposed_tp_s(8.0, 2.0, 8) == 6.0  # a short GEMM hides only its own length
    assert exposed_tp_s(0.0, 5.0, 4) == 0.0


def test_overlap_shortens_the_step_and_the_tp_share():
    off, on = step(), step(tp_comm_overlap=True)
    assert on["step_time_s"] < off["step_time_s"]
    assert 0 < on["breakdown"]["tp_s"] < off["breakdown"]["tp_s"]
    # The compute is the same; only exposed TP time went.
    saved = off["breakdown"]["tp_s"] - on["breakdown"]["tp_s"]
    assert off["step_time_s"] - on["step_time_s"] == pytest.approx(saved, rel=0.35)


def test_no_tp_no_change():
    kw = {"tp": 1, "dp": 8}
    assert step(**kw, tp_comm_overlap=True)["step_time_s"] == step(**kw)["step_time_s"]


def test_without_sequence_parallel_it_is_refused_naming_the_field():
    with pytest.raises(ScenarioError) as err:
        step(sequence_parallel=False, tp_comm_overlap=True)
    assert err.value.field == "tp_comm_overlap" and "sequence_parallel" in err.value.reason
