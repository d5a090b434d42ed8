"""Properties of the memory model over random shapes, layouts and settings (hypothesis):
more micro-batch never lowers peak activation memory, ZeRO-n+1 never needs more than ZeRO-n,
recompute never raises the peak, and the floor adds exactly once per GPU."""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.cost import memory
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training

HW = HARDWARE["h100-sxm"]


@st.composite
def cases(draw):
    """A model, a training and (dp, tp, pp, chunks) the model splits into, with in-flight
    counts shaped like 1F1B's (pp - rank) or anything up to 2 pp."""
    heads = draw(st.sampled_from([4, 8, 16, 32]))
    kv = draw(st.sampled_from([h for h in (1, 2, 4, 8, 16, 32) if heads % h == 0]))
    head_dim = draw(st.sampled_from([32, 64, 128]))
    gated = draw(st.booleans())
    tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if heads % t == 0 and kv % t == 0]))
    pp = draw(st.integers(1, 4))
    chunks = draw(st.integers(1, 2))
    layers = pp * chunks * draw(st.integers(1, 3))
    m = ModelSpec(
        "m", layers, heads * head_dim, heads, draw(st.sampled_from([128, 1024, 4096])),
        draw(st.sampled_from([1000, 32_000, 128_256])), tp * draw(st.integers(64, 4096)),
        gated_mlp=gated, kv_heads=kv, tied_embeddings=draw(st.booleans()),
        learned_positions=not gated,
    )  # fmt: skip
    t = Training(
        micro_batch_size=draw(st.integers(1, 8)),
        dtype=draw(st.sampled_from(["bf16", "fp16", "fp32"])),
        zero=draw(st.integers(0, 3)),
        recompute=draw(st.sampled_from(["none", "selective", "full"])),
        sequence_parallel=draw(st.booleans()),
        flash_attention=draw(st.booleans()),
        grad_accum_fp32=draw(st.booleans()),
        master_weights=draw(st.booleans()),
        fused_cross_entropy=draw(st.booleans()),
        fused_swiglu=draw(st.booleans()),
        dropout=draw(st.sampled_from([None, True, False])),
        autocast=draw(st.booleans()),
        unsharded_grad_accum=draw(st.booleans()),
        microbatches=draw(st.integers(1, 8)),
    )
    if t.recompute == "selective":
        t = replace(t, selective_ac=draw(st.sampled_from(["attention", "op"])))
    dp = draw(st.sampled_from([1, 2, 8, 64]))
    inflight = [draw(st.integers(1, 2 * pp)) for _ in range(pp)]
    return m, t, (dp, tp, pp), chunks, inflight


def stages(m, t, par, chunks, inflight, **kw):
    return memory.stage_memory(m, t, par, chunks, par[2] - 1, inflight, hw=HW, **kw)


def activation_peak(st_):
    return st_.activations_bytes + st_.logits_transient_bytes + st_.recompute_transient_bytes


@settings(max_examples=300, deadline=None)
@given(cases(), st.integers(1, 8))
def test_more_micro_batch_never_lowers_peak_activation_memory(case, more):
    m, t, par, chunks, inflight = case
    small = stages(m, t, par, chunks, inflight)
    big = stages(m, replace(t, micro_batch_size=t.micro_batch_size + more), par, chunks, inflight)
    for a, b in zip(small, big, strict=True):
        assert activation_peak(b) >= activation_peak(a)
        assert b.total_bytes >= a.total_bytes


@settings(max_examples=300, deadline=None)
@given(cases())
def test_zero_n_plus_1_never_needs_more_than_zero_n(case):
    """What a rank needs, its live tensors (allocated), never grows with the ZeRO stage: ZeRO-3's
    gathered units are at most the weights it stops keeping. Reserved and total do not grow
    from ZeRO-0 to 1 to 2; ZeRO-3 may reserve more than ZeRO-2 where activations dwarf the
    weights, by the fragmentation parameter gathering brings (GMLake; the llama-recipes FSDP
    rows of published_memory.json reserve 58-63 GiB for 42 allocated)."""
    m, t, par, chunks, inflight = case
    per_zero = [stages(m, replace(t, zero=z), par, chunks, inflight) for z in range(4)]
    for z, (lower, higher) in enumerate(zip(per_zero, per_zero[1:], strict=False)):
        for a, b in zip(lower, higher, strict=True):
            # Sharded gradients are reduce-scattered by unit, the root (embedding and head)
            # last, unsharded at the backward's end (root_grads_bytes): on a model whose
            # vocabulary is most of it, ZeRO-2 may hold more then than ZeRO-1's whole
            # gradients. Everything else never grows, and from ZeRO-2 to 3 nothing does.
            end = b.root_grads_bytes - a.root_grads_bytes if z == 1 else 0.0
            assert b.allocated_bytes - end <= a.allocated_bytes * (1 + 1e-12)
            if z < 2:
                assert b.total_bytes - end <= a.total_bytes * (1 + 1e-12)


@settings(max_examples=300, deadline=None)
@given(cases())
def test_recompute_never_raises_the_peak(case):
    m, t, par, chunks, inflight = case
    t = replace(t, selective_ac="attention")

    def peaks(**kw):
        return [s.total_bytes for s in stages(m, replace(t, **kw), par, chunks, inflight)]

    none, full = peaks(recompute="none"), peaks(recompute="full")
    for scope in ("attention", "op"):
        sel = peaks(recompute="selective", selective_ac=scope)
        for n, s, f in zip(none, sel, full, strict=True):
            assert n * (1 + 1e-12) >= s and n * (1 + 1e-12) >= f
            assert s * (1 + 1e-12) >= f  # full keeps the least: the layer input alone
    for k in range(m.layers // (par[2] * chunks) + 1):  # recompute_layers: between the two
        part = peaks(recompute="full", recompute_layers=k)
        for n, p, f in zip(none, part, full, strict=True):
            assert f <= p * (1 + 1e-12) and p <= n * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(cases(), st.floats(0.0, 10.0))
def test_the_floor_adds_exactly_once_per_gpu(case, floor):
    m, t, par, chunks, inflight = case
    hw = replace(HW, memory_floor_gib=floor)
    with_floor = memory.stage_memory(m, t, par, chunks, par[2] - 1, inflight, hw=hw)
    without = memory.stage_memory(m, t, par, chunks, par[2] - 1, inflight)
    for a, b in zip(with_floor, without, strict=True):
        assert a.reserved_bytes == b.reserved_bytes
        assert a.floor_bytes == floor * (1 << 30) and b.floor_bytes == 0.0
        assert a.total_bytes - b.total_bytes == (a.total_bytes - a.reserved_bytes)
        assert abs((a.total_bytes - b.total_bytes) - floor * (1 << 30)) <= 1e-6 * a.total_bytes
