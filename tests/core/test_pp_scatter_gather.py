"""Pipeline sends split over TP: without sequence parallelism each TP rank sends 1/t of the
stage boundary's activation and the receiving stage all-gathers it over TP (Megatron-LM's
scatter_gather_tensors_in_pipeline, on by default; Narayanan et al. 2021 §4.1). Before this,
every TP rank sent all of it, which priced TP-8 pipelines across nodes too slow."""

from dataclasses import replace

import pytest

from app.core.cost import comm
from app.core.evaluate.one_scenario import evaluate
from app.core.inputs.presets import HARDWARE, MODELS
from app.core.inputs.scenario import Scenario
from app.core.inputs.specs import training_of
from app.core.inputs.training import Training
from app.core.layout.topology import Layout

M, HW = MODELS["gpt3-175b"], HARDWARE["a100-80g"]
FULL = M.seq_len * 1 * M.hidden * 2  # b x s x h in bf16


def test_each_tp_rank_sends_a_tth_unless_the_split_is_off():
    split = Training(sequence_parallel=False)
    whole = Training(sequence_parallel=False, pp_scatter_gather=False)
    assert comm.activation_message_bytes(M, split, 8) == FULL / 8
    assert comm.activation_message_bytes(M, whole, 8) == FULL
    assert comm.activation_message_bytes(M, Training(sequence_parallel=True), 8) == FULL / 8
    assert comm.activation_message_bytes(M, split, 1) == FULL  # nothing to split over


def test_the_receiver_gathers_only_after_a_split_send_without_sp():
    assert comm.pp_gather_bytes(M, Training(sequence_parallel=False), 8) == FULL
    assert comm.pp_gather_bytes(M, Training(sequence_parallel=True), 8) == 0.0
    off = Training(sequence_parallel=False, pp_scatter_gather=False)
    assert comm.pp_gather_bytes(M, off, 8) == 0.0


def test_a_hop_is_the_split_send_plus_the_tp_gather():
    layout = Layout(dp=1, tp=8, pp=2, gpus_per_node=8)  # each stage one node: pp crosses
    t = Training(sequence_parallel=False)
    gather = comm.all_gather_s(FULL, comm.placement(layout, "tp", HW.domain_size), HW)
    expected = comm.p2p_s(FULL / 8, True, HW) + gather
    assert comm.pp_hop_s(M, HW, t, layout, True) == pytest.approx(expected)
    whole = comm.pp_hop_s(M, HW, replace(t, pp_scatter_gather=False), layout, True)
    assert whole == pytest.approx(comm.p2p_s(FULL, True, HW))
    # Across nodes the NIC is the bottleneck: an eighth over it plus NVLink's gather wins.
    assert comm.pp_hop_s(M, HW, t, layout, True) < whole


def test_the_scenario_knob_reaches_the_step_and_the_share_link():
    base = dict(model="gpt3-175b", hardware="a100-80g", dp=1, tp=8, pp=8, microbatches=8,
                sequence_parallel=False)  # fmt: skip
    assert training_of(Scenario(**base)).pp_scatter_gather is True
    off = Scenario(**base, pp_scatter_gather=False)
    assert off.query()["pp_scatter_gather"] == "false"
    split, whole = evaluate(Scenario(**base)), evaluate(off)
    assert split["step_time_s"] < whole["step_time_s"]
    assert split["comm"]["pp_bytes"] == pytest.approx(whole["comm"]["pp_bytes"] / 8)
