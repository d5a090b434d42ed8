"""What the flow view draws inside each F and B beyond the pipeline: the K/V blocks passed
around the CP ring and the MoE dispatch and combine all-to-alls over the EP group.

Every number is the cost model's own (the functions ``durations.layer_cost`` prices a layer
with), so the picture cannot drift from the step time:

* CP: cp - 1 ring steps per attention pass, each a p2p of one K/V block
  (``comm.cp_kv_bytes``; twice the bytes in the backward, K/V and their gradients) that runs
  behind 1/cp of the attention; the layer's exposed seconds are ``durations.cp_ring_s``.
* EP: per MoE layer and pass, two all-to-alls (dispatch, then combine), each half of
  ``comm.moe_a2a_s``'s buffer; the layer's exposed seconds are ``comm.moe_a2a_s``.

Nothing here when cp = 1 and ep = 1 (or a dense model): the 3D flow is unchanged.
"""

from __future__ import annotations

from typing import Any

from app.core.cost import comm, compute
from app.core.cost.durations import cp_ring_s
from app.core.cost.shapes import as_held
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from app.core.schedules import FORWARD_ONLY

PASSES = ("F", "B")


def _ring(m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, scale: float) -> dict:
    """One layer's CP ring in F and B (durations.cp_ring_s's terms, one step each)."""
    cp = layout.cp
    attn = compute.attention_seconds(m, hw, t, layout.tp)
    exposed = cp_ring_s(m, hw, t, layout, *attn)
    crosses = comm.placement(layout, "cp", hw.domain_size).domains > 1
    kv = comm.cp_kv_bytes(m, t, layout.tp)
    # Ring Attention §3 (Liu et al. 2023): the backward passes K/V and their gradients.
    hops = (comm.p2p_s(kv, crosses, hw), comm.p2p_s(2 * kv, crosses, hw))
    return {
        "size": cp,
        "steps": cp - 1,  # per attention pass: every rank sees every other rank's block once
        "crosses": crosses,
        "kv_bytes": kv,
        "hop_s": dict(zip(PASSES, (h * scale for h in hops), strict=True)),
        "behind_s": dict(zip(PASSES, (a / cp * scale for a in attn), strict=True)),
        "exposed_s": dict(zip(PASSES, (e * scale for e in exposed), strict=True)),
    }


def _a2a(m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, scale: float) -> dict:
    """One MoE layer's dispatch and combine in F and B (comm.moe_a2a_s, one at a time)."""
    place = comm.placement(layout, "ep", hw.domain_size)
    split = comm.moe_source_split(t, layout.tp)  # each TP rank routes its own SP shard
    half = comm.moe_a2a_buffer_bytes(m, t, split) / 2  # dispatch, or combine (token_dispatcher.py)
    each = comm.all_to_all_s(half, place, hw) * scale
    layer = comm.moe_a2a_s(m, hw, t, layout) * scale
    return {
        "size": layout.ep,
        "per_layer": 2,
        "crosses": place.domains > 1,
        "bytes": half,
        "each_s": {p: each for p in PASSES},
        "exposed_s": {p: layer for p in PASSES},  # the backward sends the two transposed
        "moe_layers": m.moe_layers,
        "layers": m.layers,
    }


def layer_comm(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, imbalance: float, scale: float
) -> dict[str, Any] | None:
    """Per layer and pass, the CP ring and the EP all-to-alls; None when neither runs.
    ``m`` as the scenario gives it (held here as predict.price holds it); ``scale`` turns
    seconds into the timeline's units (teaching units, as the TP pulse)."""
    m = as_held(m, layout.tp, t.vocab_multiple, layout.ep, imbalance)
    ep = bool(m.experts) and layout.ep > 1
    # Only the p2p ring is drawn as ring steps; an all-gather or Ulysses all-to-all CP
    # (Training.cp_comm, where present) is not a ring, and is left undrawn rather than misdrawn.
    ring = layout.cp > 1 and getattr(t, "cp_comm", "p2p") == "p2p"
    if not ring and not ep:
        return None
    return {
        "cp": _ring(m, hw, t, layout, scale) if ring else None,
        "ep": _a2a(m, hw, t, layout, scale) if ep else None,
    }


def chunk_comm(lc: dict[str, Any], layers: list[list[int]]) -> list[list[dict]]:
    """Per stage and chunk of ``layers`` layers, one pass's ring steps, all-to-alls and their
    exposed seconds, as durations.layer_cost charges them: every layer its ring, and the mean
    layer moe_layers/layers of one MoE layer's all-to-alls."""
    cp, ep = lc.get("cp"), lc.get("ep")
    share = ep["moe_layers"] / ep["layers"] if ep else 0.0
    out = []
    for row in layers:
        out.append(
            [
                {
                    "layers": n,
                    "ring_steps": n * cp["steps"] if cp else 0,
                    "cp_exposed_s": {p: n * cp["exposed_s"][p] if cp else 0.0 for p in PASSES},
                    "a2a_exposed_s": {
                        p: n * share * ep["exposed_s"][p] if ep else 0.0 for p in PASSES
                    },
                }
                for n in row
            ]
        )
    return out


def step_exposed_s(
    lc: dict[str, Any], layers: list[list[int]], microbatches: int, schedule: str
) -> dict[str, float]:
    """The busiest rank's exposed CP ring ("cp") and EP all-to-all ("ep") seconds per step, as
    cost.predict counts TP's tp_step_s: every micro-batch through each of its chunks, forward
    and (unless ``schedule`` runs forward only) backward; an axis that does not run is left out."""
    passes = ("F",) if schedule in FORWARD_ONLY else ("F", "B")
    chunks = chunk_comm(lc, layers)
    out = {}
    for key, field in (("cp", "cp_exposed_s"), ("ep", "a2a_exposed_s")):
        if lc[key] is not None:
            busiest = max(sum(c[field][p] for c in row for p in passes) for row in chunks)
            out[key] = microbatches * busiest
    return out
