"""Order comparison: for each rank order, which axis's groups leave a node, and how far.

The article's rule of thumb is that TP talks most, PP less, DP least (TP > PP > DP), so the
fastest-varying axis should be TP: its groups then sit on consecutive ranks, inside one
node's NVLink domain. This table shows what every other order costs in node crossings.
With cp > 1 the four dense axes are permuted (24 orders); ep keeps Megatron's place right
after cp (``tp-cp-ep-dp-pp``), and orders whose expert grid Megatron refuses are left out.
"""

from __future__ import annotations

from itertools import permutations
from math import gcd
from typing import Any

from app.core.layout import mesh
from app.core.layout.topology import ORDER_PRESETS, Layout

AXES3 = ("tp", "pp", "dp")


def _nodes_spanned(layout: Layout, axis: str) -> int:
    """The most nodes any one group of ``axis`` touches (1 = never leaves a node)."""
    stride, n, gpn = layout.strides[axis], layout.size(axis), layout.gpus_per_node
    if n == 1:
        return 1
    if stride >= gpn:
        return n  # members at least a node apart: each on its own node
    # Group members are lead + i*stride; nodes touched is the count of distinct r // gpn.
    # The pattern repeats every lcm(stride*n, gpn) ranks, so leads beyond it add nothing.
    period = stride * n * gpn // gcd(stride * n, gpn)
    worst = 1
    for lead in range(min(layout.world_size, period)):
        if (lead // stride) % n:
            continue
        touched = len({(lead + i * stride) // gpn for i in range(n)})
        worst = max(worst, touched)
        if worst == n:
            break
    return worst


def _row(layout: Layout, order: tuple[str, ...], axes: tuple[str, ...]) -> dict[str, Any]:
    spans = {a: _nodes_spanned(layout, a) for a in axes}
    return {
        "order": "-".join(order),
        "presets": _presets(order, len(axes) == 3),
        "nodes_spanned": spans,
        "crosses_node": {a: spans[a] > 1 for a in axes},
    }


def _presets(order: tuple[str, ...], exact: bool) -> list[str]:
    """Framework presets with this order: spelled the same in 3D, else the same 5-axis order."""
    if exact:
        return sorted(k for k, v in ORDER_PRESETS.items() if v == order)
    full = mesh.full_order(order)
    return sorted(k for k, v in ORDER_PRESETS.items() if mesh.full_order(v) == full)


def compare(
    dp: int,
    tp: int,
    pp: int,
    gpus_per_node: int,
    cp: int = 1,
    ep: int = 1,
    etp: int | None = None,
) -> list[dict[str, Any]]:
    """Every permutation of the axes (tp, pp, dp; cp too when > 1), framework presets named,
    worst span per axis (and of the EP group when ep > 1). ``etp`` (None: tp) is the expert
    grid's TP: below tp, EP folds over TP ranks and may exceed dp x cp."""
    dense = AXES3 if cp == 1 else ("tp", "cp", "pp", "dp")
    shown = dense + (("ep",) if ep > 1 else ())
    out = []
    for perm in permutations(dense):
        order = perm if ep == 1 else mesh.full_order(perm)
        if cp == 1 and ep > 1:
            order = tuple(a for a in order if a != "cp")
        sizes = {"dp": dp, "tp": tp, "pp": pp, "cp": cp, "ep": ep, "etp": etp or tp}
        if mesh.fold_problem(order, sizes):
            continue  # Megatron refuses this expert grid (mesh.fold_problem)
        layout = Layout(dp=dp, tp=tp, pp=pp, order=order, gpus_per_node=gpus_per_node,
                        cp=cp, ep=ep, etp=etp)  # fmt: skip
        out.append(_row(layout, order, shown))
    return out


def of_layout(lay: dict[str, Any]) -> list[dict[str, Any]]:
    """``compare`` for a scenario's layout JSON (cp, ep and etp there only when not default)."""
    sizes = lay["sizes"]
    return compare(sizes["dp"], sizes["tp"], sizes["pp"], lay["gpus_per_node"],
                   cp=sizes.get("cp", 1), ep=sizes.get("ep", 1), etp=sizes.get("etp"))  # fmt: skip
