"""Named presets carry the published shapes and datasheet figures, and cannot be changed."""

import dataclasses

import pytest

from app.core.inputs.hardware import AMPERE, HOPPER
from app.core.inputs.presets import HARDWARE, MODELS, Efficiency

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


# The datasheet figures, per GPU: (dense BF16 TFLOP/s, memory GiB, memory TB/s, scale-up
# GB/s one way = datasheet bidirectional / 2, east-west NICs per node, Gb/s per NIC, GPUs per
# node, GPUs per scale-up domain). Sources are in app/core/inputs/hardware.py beside each row.
DATASHEETS = {
    # A100 datasheet; DGX A100 user guide: 8x ConnectX-6 HDR 200 Gb/s.
    "a100-40g": (312, 40, 1.555, 600 / 2, 8, 200, 8, 8),
    "a100-80g": (312, 80, 2.039, 600 / 2, 8, 200, 8, 8),
    # H100 datasheet: 1,979 sparse = 989 dense; DGX H100: 8x ConnectX-7 NDR 400 Gb/s.
    "h100-sxm": (989, 80, 3.35, 900 / 2, 8, 400, 8, 8),
    # H800: NVLink 400 GB/s; DeepSeek-V3 tech report §3.2.2: IB 50 GB/s per GPU.
    "h800": (989, 80, 3.35, 400 / 2, 8, 400, 8, 8),
    "h200": (989, 141, 4.8, 900 / 2, 8, 400, 8, 8),
    # DGX B200: 1,440 GB / 8, 64 TB/s / 8, FP8 72 PF sparse -> BF16 2.25 PF dense, 14.4 TB/s / 8.
    "b200": (2250, 180, 8.0, 14_400 / 8 / 2, 8, 400, 8, 8),
    # GB200 NVL72: 360 PF sparse BF16 / 72 / 2, 13.4 TB / 72, 576 TB/s / 72; 4 GPUs and 4x
    # ConnectX-7 400G per compute tray (DGX GB200 user guide), 72 GPUs on one NVLink domain.
    "gb200-nvl72": (2500, 186, 8.0, 1800 / 2, 4, 400, 4, 72),
    # MI300X datasheet: 1,307.4 dense BF16, 192 GB, 5.3 TB/s; 7 Infinity Fabric links x 128 GB/s
    # both ways; ROCm multi-node docs: 8x ConnectX-7 400 Gb/s.
    "mi300x": (1307.4, 192, 5.3, 7 * 128 / 2, 8, 400, 8, 8),
    # L40S datasheet: 362.05 dense, 48 GB GDDR6, 864 GB/s, PCIe Gen4 x16 64 GB/s both ways;
    # Enterprise RA PCIe Optimized 2-8-5: 4 east-west NICs of 2x 200 Gb/s for 8 GPUs.
    "l40s": (362.05, 48, 0.864, 64 / 2, 4, 400, 8, 8),
}


def test_the_table_covers_every_hardware_preset():
    assert set(DATASHEETS) == set(HARDWARE)


@pytest.mark.parametrize("name,figures", DATASHEETS.items())
def test_hardware_datasheet_figures(name, figures):
    tflops, gib, tbps, intra, nics, nic_gbit, per_node, domain = figures
    hw = HARDWARE[name]
    got = (hw.peak_tflops, hw.hbm_gib, hw.hbm_tbps, hw.intra_gbps)
    assert got == pytest.approx((tflops, gib, tbps, intra))
    assert (hw.nics_per_node, hw.gpus_per_node, hw.domain_size) == (nics, per_node, domain)
    # One GPU's share of the node's NICs, in GB/s one way.
    assert hw.inter_gbps == pytest.approx(nics * nic_gbit / 8 / per_node)


@pytest.mark.parametrize("name", sorted(DATASHEETS))
def test_every_preset_cites_its_datasheet_and_shares_its_generations_efficiency(name):
    hw = HARDWARE[name]
    assert "datasheet" in hw.source
    # Figures only where the datasheet has none: the NIC count names its reference design.
    assert "NICs:" in hw.source
    # One set of constants per generation, never per preset: validated ones for Ampere and
    # Hopper (bench/fidelity.py --fit), the defaults for generations without published runs.
    generation = {"a100": AMPERE, "h100": HOPPER, "h800": HOPPER, "h200": HOPPER}
    assert hw.efficiency == generation.get(name[:4], Efficiency())


def test_only_the_nvl72_rack_spans_nodes_with_its_scale_up_domain():
    spanning = {k for k, h in HARDWARE.items() if h.domain_size > h.gpus_per_node}
    assert spanning == {"gb200-nvl72"}
    assert HARDWARE["gb200-nvl72"].domain_size // HARDWARE["gb200-nvl72"].gpus_per_node == 18


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
