"""Exports of what lies beyond a dense GPT: a mixture of experts and MLA as Megatron-LM's
flags (each one in Megatron core_v0.15.3's arguments.py), torchtitan's expert-parallel
degree, and context parallelism's exchange in each framework's words."""

from dataclasses import replace

import pytest

from app.core.export import export
from app.core.export.megatron_moe import layer_freq, layer_pattern
from app.core.inputs.presets import MODELS
from app.core.inputs.scenario import Scenario
from tests.core.test_export_megatron import MEGATRON_FLAGS, _flags

tomllib = pytest.importorskip("tomllib")
V3 = dict(model="deepseek-v3", tp=1, pp=16, dp=128, ep=64, order="megatron-5d", microbatches=32)


def test_deepseek_v3_is_exported_with_its_experts_and_latent_attention():
    f = _flags(**V3, hardware="h800", zero=1)
    assert set(f) <= MEGATRON_FLAGS, set(f) - MEGATRON_FLAGS
    assert (f["--num-experts"], f["--moe-router-topk"], f["--moe-ffn-hidden-size"]) == (
        "256",
        "8",
        "2048",
    )
    assert f["--moe-shared-expert-intermediate-size"] == "2048"
    assert f["--moe-layer-freq"] == "[0]*3+[1]*58"  # as the shell hands it: first_k_dense 3
    assert f["--expert-model-parallel-size"] == "64"
    assert f["--moe-token-dispatcher-type"] == "alltoall" and "--moe-grouped-gemm" in f
    mla = ("--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim",
           "--v-head-dim")  # fmt: skip
    assert [f[k] for k in mla] == ["1536", "512", "128", "64", "128"]
    assert "--multi-latent-attention" in f


def test_mixtral_has_experts_in_every_layer_and_no_mla():
    f = _flags(model="mixtral-8x7b", dp=8, tp=1, pp=1, ep=8, order="megatron-5d")
    assert f["--moe-layer-freq"] == "1" and "--multi-latent-attention" not in f
    assert "--moe-shared-expert-intermediate-size" not in f


@pytest.mark.parametrize(("every", "first"), [(1, 0), (2, 0), (1, 3), (3, 2)])
def test_the_layer_pattern_is_the_models_own_rule(every, first):
    m = replace(MODELS["mixtral-8x7b"], moe_every=every, first_dense_layers=first)
    pattern = layer_pattern(m)
    assert len(pattern) == m.layers and sum(pattern) == m.moe_layers
    freq = layer_freq(m)
    if freq != 1:  # Megatron evaluates the expression as a Python list
        assert eval(freq) == pattern  # our own string of digits, [], * and +


def test_torchtitan_gets_the_expert_parallel_degree_of_a_moe_model():
    q = dict(model="mixtral-8x7b", dp=8, tp=1, pp=1, ep=8, order="megatron-5d", zero=2)
    e = export("torchtitan", Scenario(**q))
    assert e.ok, e.reason
    assert tomllib.loads(e.text)["parallelism"]["expert_parallel_degree"] == 8


@pytest.mark.parametrize(
    ("cp_comm", "megatron", "torchtitan"),
    [("p2p", None, "alltoall"), ("allgather", "allgather", "allgather"), ("a2a", "a2a", None)],
)
def test_the_cp_exchange_is_each_frameworks_own(cp_comm, megatron, torchtitan):
    q = dict(dp=1, tp=2, pp=1, cp=4, cp_comm=cp_comm, sequence_parallel=True, zero=2)
    assert _flags(**q).get("--cp-comm-type") == megatron
    e = export("torchtitan", Scenario(**q))
    if torchtitan is None:
        assert not e.ok and "Ulysses" in e.reason
    else:
        rotate = tomllib.loads(e.text)["parallelism"]["context_parallel_rotate_method"]
        assert rotate == torchtitan
