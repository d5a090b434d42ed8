"""Named presets carry the published shapes and datasheet figures, and cannot be changed."""

import dataclasses

import pytest

from app.core.presets import HARDWARE, MODELS

# Narayanan et al. 2021 Table 1: (layers, hidden, heads); every row uses s = 2048, V = 51,200.
MEGATRON_TABLE_1 = {
    "megatron-1.7b": (24, 2304, 24), "megatron-3.6b": (30, 3072, 32),
    "megatron-7.5b": (36, 4096, 32), "megatron-18b": (40, 6144, 48),
    "megatron-39b": (48, 8192, 64), "megatron-76b": (60, 10240, 80),
    "megatron-145b": (80, 12288, 96), "megatron-310b": (96, 16384, 128),
    "megatron-530b": (105, 20480, 128), "megatron-1t": (128, 25600, 160),
}  # fmt: skip

# Dubey et al. 2024 Table 3: (layers, hidden, ffn, heads); 8 KV heads, V = 128,256, s = 8192.
LLAMA3 = {
    "llama3-8b": (32, 4096, 14336, 32),
    "llama3-70b": (80, 8192, 28672, 64),
    "llama3-405b": (126, 16384, 53248, 128),
}


@pytest.mark.parametrize("name,shape", MEGATRON_TABLE_1.items())
def test_megatron_table_1_shapes(name, shape):
    m = MODELS[name]
    assert (m.layers, m.hidden, m.heads) == shape
    assert (m.seq_len, m.vocab, m.ffn_hidden) == (2048, 51_200, 4 * m.hidden)
    assert not m.gated_mlp and m.tied_embeddings


@pytest.mark.parametrize("name,shape", LLAMA3.items())
def test_llama3_shapes_are_gqa_swiglu_and_untied(name, shape):
    m = MODELS[name]
    assert (m.layers, m.hidden, m.ffn_hidden, m.heads) == shape
    assert (m.kv_heads, m.vocab, m.seq_len) == (8, 128_256, 8192)
    assert m.gated_mlp and not m.tied_embeddings and not m.learned_positions
    assert m.kv_dim == m.hidden // m.heads * 8


def test_tiny_teaching_model():
    m = MODELS["tiny"]
    assert (m.layers, m.hidden, m.heads, m.seq_len, m.vocab) == (8, 128, 4, 128, 512)
    assert m.hidden % m.heads == 0


@pytest.mark.parametrize(
    "name,figures",
    [  # (bf16 dense TFLOP/s, HBM GiB, HBM TB/s, NVLink GB/s one way, network GB/s per GPU)
        ("a100-80g", (312, 80, 2.0, 300, 25)),
        ("h100-sxm", (989, 80, 3.35, 450, 50)),
        ("h200", (989, 141, 4.8, 450, 50)),
    ],
)
def test_hardware_datasheet_figures(name, figures):
    hw = HARDWARE[name]
    got = (hw.peak_tflops, hw.hbm_gib, hw.hbm_tbps, hw.intra_gbps, hw.inter_gbps)
    assert got == pytest.approx(figures) and hw.gpus_per_node == 8


def test_every_preset_is_keyed_by_its_own_name():
    assert all(m.name == k for k, m in MODELS.items())
    assert all(h.name == k for k, h in HARDWARE.items())


def test_presets_are_read_only():
    with pytest.raises(TypeError):
        MODELS["mine"] = MODELS["tiny"]  # type: ignore[index]
    with pytest.raises(TypeError):
        HARDWARE["mine"] = HARDWARE["h200"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        MODELS["tiny"].layers = 9  # type: ignore[misc]
