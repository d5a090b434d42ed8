"""Order comparison: for each rank order, which axis's groups leave a node, and how far.

The article's rule of thumb is that TP talks most, PP less, DP least (TP > PP > DP), so the
fastest-varying axis should be TP: its groups then sit on consecutive ranks, inside one
node's NVLink domain. This table shows what every other order costs in node crossings.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

from app.core.layout.topology import ORDER_PRESETS, Layout

AXES3 = ("tp", "pp", "dp")


def _nodes_spanned(layout: Layout, axis: str) -> int:
    """The most nodes any one group of ``axis`` touches (1 = never leaves a node)."""
    stride, n, gpn = layout.strides[axis], layout.size(axis), layout.gpus_per_node
    if n == 1:
        return 1
    # Group members are lead + i*stride; nodes touched is the count of distinct r // gpn.
    worst = 1
    for lead in range(layout.world_size):
        if (lead // stride) % n:
            continue
        touched = len({(lead + i * stride) // gpn for i in range(n)})
        worst = max(worst, touched)
        if worst == n:
            break
    return worst


def compare(dp: int, tp: int, pp: int, gpus_per_node: int) -> list[dict[str, Any]]:
    """Every permutation of the three axes, framework presets named, worst span per axis."""
    out = []
    for order in permutations(AXES3):
        layout = Layout(dp=dp, tp=tp, pp=pp, order=order, gpus_per_node=gpus_per_node)
        spans = {a: _nodes_spanned(layout, a) for a in AXES3}
        out.append(
            {
                "order": "-".join(order),
                "presets": sorted(k for k, v in ORDER_PRESETS.items() if v == order),
                "nodes_spanned": spans,
                "crosses_node": {a: spans[a] > 1 for a in AXES3},
            }
        )
    return out
