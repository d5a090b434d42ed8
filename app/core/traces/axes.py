"""Which mesh axis each collective ran on, under a layout the user gave or one inferred from
the process groups the traces show.

A layout (app/core/layout) puts every rank at (dp, pp, tp, and cp) under a rank order, and
in an expert-parallel group on its expert grid (ep folds over tp x cp x dp, layout/mesh.py);
each axis's groups are then the ranks that differ only in that coordinate. A collective's
``Process Group Ranks`` is one such group (or a part of one: Megatron's embedding group is
two ranks of a pipeline group), or the whole world. Megatron's gradient groups are DP's too:
with cp > 1 it reduces over dp x cp (parallel_state.py's data-parallel group with context
parallelism), and the routed experts' over the expert-data-parallel group.

Inference reads the pipeline axis from the send/recv peers, EP from the groups of all-to-all
collectives (MoE token dispatch), and the others from the evenly spaced groups: with two
such families the closer-spaced one is TP, as every framework puts TP fastest
(topology.ORDER_PRESETS); with three, the middle one is CP, where Megatron's order
``tp-cp-ep-dp-pp`` puts it. A family whose groups join two closer ones (dp x cp) is DP's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from app.core.layout.topology import DEFAULT_ORDER, Layout
from app.core.traces.refusals import refuse
from app.core.traces.spans import RankTrace, Span, StepSpans, TraceError

DENSE = ("tp", "cp", "dp", "pp")  # tried in this order, then ep (a group both is dense's)


def _describe(layout: Layout) -> str:
    order = "-".join(layout.order)
    more = "".join(f" {a}={layout.size(a)}" for a in ("cp", "ep") if layout.size(a) > 1)
    return f"dp={layout.dp} tp={layout.tp} pp={layout.pp}{more} order {order}"


def _all_to_all(op: str) -> bool:
    """An all-to-all (all_to_all, all_to_allv, alltoall_base): MoE dispatch and combine."""
    return "toall" in op.replace("_", "").lower()


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


def _a2a_groups(traces: Sequence[RankTrace]) -> tuple[set, set]:
    """The groups of all-to-all collectives (expert-parallel groups), and those of them that
    no other collective ran on (an EP group may also be a dense one: dp x cp at ep = dp x cp)."""
    a2a, other = set(), set()
    for t in traces:
        for step in t.steps:
            for s in step.spans:
                if s.kind == "coll" and s.group:
                    (a2a if _all_to_all(s.op) else other).add(s.group)
    return a2a, a2a - other


def _outer(families: dict[tuple[int, int], tuple[int, ...]]) -> dict[tuple[int, int], tuple]:
    """Families with a joined one (stride s, size a*b over a closer family (s, a)) replaced by
    its outer factor (s*a, b): Megatron's dp x cp gradient group shows dp's spacing."""
    out = {}
    for (stride, size), g in sorted(families.items()):
        inner = [a for (s, a) in families if s == stride and a < size and size % a == 0]
        key = (stride * max(inner), size // max(inner)) if inner else (stride, size)
        out.setdefault(key, g)
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
    experts, only_experts = _a2a_groups(traces)
    families: dict[tuple[int, int], tuple[int, ...]] = {}
    for g in sorted(_groups_seen(traces) - only_experts):
        if len(g) < world and not any(set(g) <= set(p) for p in pipes):
            families.setdefault((_stride(g), len(g)), g)
    families = _outer(families)
    if len(families) > 3:
        extra = sorted(families)[3]
        raise TraceError(
            f"process group {list(families[extra])} is a fourth family of groups beside "
            "TP, CP and DP: it fits no rank order of dp, tp, cp and pp"
        )
    names = _family_names(families, _named_groups(traces))
    for name, (stride, size) in zip(names, sorted(families), strict=False):
        sizes[name], strides[name] = size, stride
    product = sizes.get("dp", 1) * sizes.get("tp", 1) * sizes.get("pp", 1) * sizes.get("cp", 1)
    if world % product:
        raise TraceError(f"the groups seen ({sizes}) do not divide the world of {world} ranks")
    spare = None
    if world // product > 1:
        spare = next((a for a in ("dp", "tp", "pp") if a not in sizes), None)
        if spare is None:
            raise TraceError(f"the groups seen ({sizes}) cover {product} of {world} ranks")
        sizes[spare] = world // product
    order = _order(sizes, strides, spare)
    ep = max((len(g) for g in experts if len(g) > 1), default=1)
    try:
        layout = Layout(dp=sizes.get("dp", 1), tp=sizes.get("tp", 1), pp=sizes.get("pp", 1),
                        order=order, gpus_per_node=gpus_per_node, cp=sizes.get("cp", 1),
                        ep=ep)  # fmt: skip
    except ValueError as err:  # an all-to-all group that does not fold as Megatron's EP
        group = list(max(experts, key=len))
        raise TraceError(f"all-to-all process group {group} is no EP group: {err}") from err
    for g in _groups_seen(traces):
        _group_axis(layout, g, "")  # refuses a group that the inferred layout does not hold
    return layout


def _named_groups(traces: Sequence[RankTrace]) -> dict[tuple[int, ...], str]:
    """The axis each group's own name states (the probe's ranges, DeviceMesh's pg_desc),
    for the groups no two names disagree on."""
    seen: dict[tuple[int, ...], set[str]] = {}
    for t in traces:
        for group, axis in t.named:
            seen.setdefault(group, set()).add(axis)
    return {g: next(iter(a)) for g, a in seen.items() if len(a) == 1}


def _family_names(families: dict[tuple[int, int], tuple], named: dict) -> list[str]:
    """Each family's axis, closest spaced first: by spacing (module docstring), unless the
    groups name their axes. One family alone is DP by spacing, yet a dp=1 tp=2 run's TP
    groups look the same; the probe names them ("tp all_reduce ranks=[0, 1]")."""
    keys = sorted(families)
    default = (["dp"], ["tp", "dp"], ["tp", "cp", "dp"])[max(len(keys), 1) - 1]
    picked = [named.get(families[k]) for k in keys]
    picked = [p if p in ("tp", "cp", "dp") else d for p, d in zip(picked, default, strict=False)]
    return picked if len(set(picked)) == len(picked) else default


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


def _dp_groups(layout: Layout, rank: int) -> list[set[int]]:
    """DP's gradient groups of ``rank`` beyond its dp group: dp x cp (cp > 1) and the expert-
    data-parallel group (ep > 1), as Megatron-LM's parallel_state.py builds them."""
    out = []
    if layout.cp > 1:
        out.append({m for c in layout.group("cp", rank) for m in layout.group("dp", c)})
    if layout.ep > 1 and layout.size("edp") > 1:
        out.append(set(layout.group("edp", rank)))
    return out


def _group_axis(layout: Layout, group: tuple[int, ...], where: str, op: str = "") -> str:
    """tp, cp, ep, dp or pp for a group (or part of one) of that axis; world for the whole
    world. An all-to-all on a group that is also a dense axis's is EP's (MoE dispatch), any
    other collective there the dense axis's."""
    if max(group) >= layout.world_size:
        raise TraceError(f"{where}process group {list(group)} has a rank outside the "
                         f"{layout.world_size} ranks of {_describe(layout)}")  # fmt: skip
    live = [a for a in DENSE if layout.size(a) > 1]
    a2a = layout.ep > 1 and _all_to_all(op)
    if len(group) == layout.world_size and len(live) != 1 and not a2a:
        return "world"
    members, first = set(group), group[0]
    found = [(a, set(layout.group(a, first))) for a in live]
    found += [("dp", g) for g in _dp_groups(layout, first)]
    if layout.ep > 1:
        ep = ("ep", set(layout.group("ep", first)))
        found = [ep, *found] if a2a else [*found, ep]
    for exact in (True, False):
        for axis, full in found:
            if members == full or (not exact and members <= full):
                return _gradients_over_cp(layout, axis, members, first, op)
    raise refuse("group_no_axis", where=where, group=str(list(group)), layout=_describe(layout))


def _gradients_over_cp(layout: Layout, axis: str, members: set, rank: int, op: str) -> str:
    """DP for a reduction on a CP group that is also the dp x cp gradient group (dp = 1), else
    ``axis``: CP's own exchanges are sends, all-gathers or all-to-alls (Transformer Engine's
    cp_comm_type p2p, all_gather, a2a), while the gradients are all-reduced or reduce-scattered
    over dp x cp (Megatron-LM parallel_state.py, its data-parallel group with context)."""
    reduction = any(k in op.replace("_", "").lower() for k in ("allreduce", "reducescatter"))
    if axis == "cp" and reduction and members in _dp_groups(layout, rank):
        return "dp"
    return axis


def _span_axis(layout: Layout, t: RankTrace, s: Span) -> str | None:
    where = f"{t.name}: "
    if s.kind == "coll":
        if s.group:
            return _group_axis(layout, s.group, where, s.op)
        live = [a for a in ("tp", "cp", "ep", "dp") if layout.size(a) > 1]
        if len(live) == 1:  # the trace names no group (gloo): the one collective axis
            return live[0]
        raise refuse("no_group_ranks", where=where, op=s.op, layout=_describe(layout),
                     axes=len(live))  # fmt: skip
    if s.kind in ("send", "recv"):
        if s.peer is None:
            return "pp" if layout.pp > 1 else None
        if s.peer in layout.group("pp", t.rank) and s.peer != t.rank:
            return "pp"
        if layout.cp > 1 and s.peer in layout.group("cp", t.rank) and s.peer != t.rank:
            return "cp"  # ring attention's exchange between CP ranks (Liu et al. 2023)
        key = "send_not_stages" if layout.cp == 1 else "send_not_stages_cp"
        raise refuse(key, where=where, kind=s.kind, rank=t.rank, peer=s.peer,
                     layout=_describe(layout))  # fmt: skip
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
