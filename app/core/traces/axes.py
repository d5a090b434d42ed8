"""Which mesh axis each collective ran on, under a layout the user gave or one inferred from
the process groups the traces show.

A layout (app/core/layout) puts every rank at (dp, pp, tp) under a rank order; each axis's
groups are then the ranks that differ only in that coordinate. A collective's
``Process Group Ranks`` is one such group (or a part of one: Megatron's embedding group is
two ranks of a pipeline group), or the whole world. Inference reads the pipeline axis from
the send/recv peers and the others from the evenly spaced groups: with two such families,
the closer-spaced one is TP, as every framework puts TP fastest (topology.ORDER_PRESETS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from app.core.layout.topology import DEFAULT_ORDER, Layout
from app.core.traces.refusals import refuse
from app.core.traces.spans import RankTrace, Span, StepSpans, TraceError


def _describe(layout: Layout) -> str:
    order = "-".join(layout.order)
    return f"dp={layout.dp} tp={layout.tp} pp={layout.pp} order {order}"


def _stride(group: tuple[int, ...]) -> int:
    """The spacing of an evenly spaced group; TraceError naming it when it is not."""
    gaps = {b - a for a, b in zip(group, group[1:], strict=False)}
    if len(gaps) != 1:
        raise refuse("group_uneven", group=str(list(group)))
    return gaps.pop()


def _pipeline_groups(traces: Sequence[RankTrace]) -> list[tuple[int, ...]]:
    """Connected components of the send/recv peer graph: the pipeline groups."""
    parent: dict[int, int] = {}

    def root(r: int) -> int:
        while parent.setdefault(r, r) != r:
            r = parent[r]
        return r

    for t in traces:
        for step in t.steps:
            for s in step.spans:
                if s.kind in ("send", "recv") and s.peer is not None:
                    parent[root(t.rank)] = root(s.peer)
    comps: dict[int, list[int]] = {}
    for r in list(parent):
        comps.setdefault(root(r), []).append(r)
    return [tuple(sorted(c)) for c in comps.values() if len(c) > 1]


def _groups_seen(traces: Sequence[RankTrace]) -> set[tuple[int, ...]]:
    out: set[tuple[int, ...]] = set()
    for t in traces:
        out |= set(t.groups)
        for step in t.steps:
            out |= {s.group for s in step.spans if s.kind == "coll" and s.group}
    return out


def infer_layout(traces: Sequence[RankTrace], gpus_per_node: int = 8) -> Layout:
    """The layout the traces' groups imply (module docstring); TraceError naming the group
    that fits none."""
    world = traces[0].world
    sizes: dict[str, int] = {}
    strides: dict[str, int] = {}
    pipes = _pipeline_groups(traces)
    if pipes:
        sizes["pp"], strides["pp"] = max(len(g) for g in pipes), min(map(_stride, pipes))
    families: dict[tuple[int, int], tuple[int, ...]] = {}
    for g in sorted(_groups_seen(traces)):
        if len(g) < world and not any(set(g) <= set(p) for p in pipes):
            families.setdefault((_stride(g), len(g)), g)
    if len(families) > 2:
        extra = sorted(families)[2]
        raise TraceError(
            f"process group {list(families[extra])} is a third family of groups beside "
            "TP and DP: it fits no rank order of dp, tp and pp"
        )
    names = ["dp"] if len(families) == 1 else ["tp", "dp"]
    for name, (stride, size) in zip(names, sorted(families), strict=False):
        sizes[name], strides[name] = size, stride
    product = sizes.get("dp", 1) * sizes.get("tp", 1) * sizes.get("pp", 1)
    if world % product:
        raise TraceError(f"the groups seen ({sizes}) do not divide the world of {world} ranks")
    spare = None
    if world // product > 1:
        spare = next((a for a in ("dp", "tp", "pp") if a not in sizes), None)
        if spare is None:
            raise TraceError(f"the groups seen ({sizes}) cover {product} of {world} ranks")
        sizes[spare] = world // product
    order = _order(sizes, strides, spare)
    layout = Layout(dp=sizes.get("dp", 1), tp=sizes.get("tp", 1), pp=sizes.get("pp", 1),
                    order=order, gpus_per_node=gpus_per_node)  # fmt: skip
    for g in _groups_seen(traces):
        _group_axis(layout, g, "")  # refuses a group that the inferred layout does not hold
    return layout


def _order(sizes: dict[str, int], strides: dict[str, int], spare: str | None) -> tuple[str, ...]:
    """Axes fastest first: size-1 axes lead (their place changes no stride), then the seen
    axes by spacing, with the axis no group showed (``spare``) where the spacing skips it."""
    known = sorted((a for a in strides if sizes.get(a, 1) > 1), key=strides.__getitem__)
    order = [a for a in DEFAULT_ORDER if sizes.get(a, 1) == 1]
    cum = 1
    for axis in known:
        if spare and strides[axis] != cum:
            order.append(spare)
            cum, spare = cum * sizes[spare], None
        order.append(axis)
        cum *= sizes[axis]
    return tuple(order + ([spare] if spare else []))


def _group_axis(layout: Layout, group: tuple[int, ...], where: str) -> str:
    """tp, dp or pp for a group (or part of one) of that axis; world for the whole world."""
    if max(group) >= layout.world_size:
        raise TraceError(f"{where}process group {list(group)} has a rank outside the "
                         f"{layout.world_size} ranks of {_describe(layout)}")  # fmt: skip
    live = [a for a in ("tp", "dp", "pp") if layout.size(a) > 1]
    if len(group) == layout.world_size and len(live) != 1:
        return "world"
    members = set(group)
    for exact in (True, False):
        for axis in live:
            full = set(layout.group(axis, group[0]))
            if members == full or (not exact and members <= full):
                return axis
    raise refuse("group_no_axis", where=where, group=str(list(group)), layout=_describe(layout))


def _span_axis(layout: Layout, t: RankTrace, s: Span) -> str | None:
    where = f"{t.name}: "
    if s.kind == "coll":
        if s.group:
            return _group_axis(layout, s.group, where)
        live = [a for a in ("tp", "dp") if layout.size(a) > 1]
        if len(live) == 1:  # the trace names no group (gloo): the one collective axis
            return live[0]
        raise TraceError(
            f"{where}collective {s.op} has no Process Group Ranks (the backend did not "
            f"record them) and {_describe(layout)} has {len(live)} collective axes"
        )
    if s.kind in ("send", "recv"):
        if s.peer is None:
            return "pp" if layout.pp > 1 else None
        if s.peer in layout.group("pp", t.rank) and s.peer != t.rank:
            return "pp"
        raise TraceError(f"{where}{s.kind} between ranks {t.rank} and {s.peer} is not "
                         f"between pipeline stages under {_describe(layout)}")  # fmt: skip
    return None


def label_run(traces: Sequence[RankTrace], layout: Layout) -> list[RankTrace]:
    """Every trace with each communication span's axis set; TraceError for a rank outside
    the layout, a group that is no axis's, or a send that is not between stages."""
    out = []
    for t in traces:
        if t.world != layout.world_size or t.rank >= layout.world_size:
            raise refuse("rank_not_in_layout", file=t.name, rank=t.rank, world=t.world,
                         layout=_describe(layout), ranks=layout.world_size)  # fmt: skip
        steps = tuple(
            StepSpans(st.step, st.start_us, st.end_us,
                      tuple(replace(s, axis=_span_axis(layout, t, s)) for s in st.spans))
            for st in t.steps
        )  # fmt: skip
        out.append(replace(t, steps=steps))
    return out
