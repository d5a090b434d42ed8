"""Context parallelism in the time model: each CP rank computes its s/cp positions against
every key, passes K/V blocks around the CP ring behind its attention, and reduces gradients
over DP x CP (Megatron-LM; Liu et al. 2023, Ring Attention §3)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.cost import comm, compute, durations, step
from app.core.cost.shapes import attention_flops, rank_tokens
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.models import MODELS
from app.core.inputs.training import Training
from app.core.layout.topology import Layout

M = MODELS["llama3-8b"]
HW = HARDWARE["h100-sxm"]
T = Training(micro_batch_size=2, microbatches=4)


def test_a_cp_rank_computes_its_share_of_positions_against_every_key():
    t2 = replace(T, cp=2)
    assert rank_tokens(M, t2) * 2 == rank_tokens(M, T) == 2 * M.seq_len
    # 4 b (s/cp) s h / t: the attention FLOPs of a rank are 1/cp of the whole sequence's.
    whole = attention_flops(M, rank_tokens(M, T), 1)
    assert attention_flops(M, rank_tokens(M, t2), 1) * 2 == pytest.approx(whole)
    assert comm.tp_message_bytes(M, t2) * 2 == comm.tp_message_bytes(M, T)


def test_the_gemms_of_a_cp_rank_are_those_of_half_the_tokens():
    half = replace(M, seq_len=M.seq_len // 2)
    cp2 = compute.layer_gemm_seconds(M, HW, replace(T, cp=2), 1)
    assert cp2 == pytest.approx(compute.layer_gemm_seconds(half, HW, T, 1))
    assert cp2 < compute.layer_gemm_seconds(M, HW, T, 1)


def test_the_kv_block_and_the_ring_exposure_follow_their_closed_forms():
    t, layout = replace(T, cp=4), Layout(dp=1, tp=2, pp=1, cp=4, gpus_per_node=8)
    kv = 2.0 * T.micro_batch_size * (M.seq_len // 4) * M.kv_dim / 2 * T.element_bytes
    assert comm.cp_kv_bytes(M, t, 2) == kv
    hop, hop_b = comm.p2p_s(kv, False, HW), comm.p2p_s(2 * kv, False, HW)
    # Hidden behind a long attention; exposed by what each of the cp - 1 hops outlasts.
    assert durations.cp_ring_s(M, HW, t, layout, 1.0, 2.0) == (0.0, 0.0)
    f, b = durations.cp_ring_s(M, HW, t, layout, 0.0, 0.0)
    assert (f, b) == pytest.approx((3 * hop, 3 * hop_b)) and f > 0
    one = Layout(dp=1, tp=2, pp=1, gpus_per_node=8)
    assert durations.cp_ring_s(M, HW, T, one, 0.0, 0.0) == (0.0, 0.0)


def test_gradients_are_reduced_over_dp_and_cp():
    layout = Layout(dp=2, tp=2, pp=1, cp=2, gpus_per_node=8)
    assert comm.grad_placement(layout, 8).size == 4
    alone = Layout(dp=1, tp=2, pp=1, cp=2, gpus_per_node=8)
    # One DP replica split over 2 CP ranks still has to sum their gradients.
    assert step.grad_sync_s(10**9, T, alone, HW) > 0
    assert step.grad_sync_s(10**9, T, Layout(dp=1, tp=2, pp=1, gpus_per_node=8), HW) == 0
