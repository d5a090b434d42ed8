"""The simulator's fast pass against a plain longest-path reference that charges every input
the module docstring names (F: the previous stage's F; B: its own F and the next stage's B;
W: its own B), so an input the fast pass drops as implied must really be implied."""

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.schedules import (
    RELEASE_BY_UNIT,
    ScheduleError,
    ScheduleName,
    build,
    chunks_per_rank,
    virtual_stage,
)
from app.core.simulate import Durations, simulate

PLAIN = sorted(set(ScheduleName) - RELEASE_BY_UNIT)


def reference(name, actions, chunk_d):
    """(starts, ends) per rank: each action starts when its rank is free and every input has
    ended (plus the consumer chunk's p2p when the producer is on another rank)."""
    pp = len(actions)
    nvs = pp * len(chunk_d[0])
    split = any(a.kind == "W" for row in actions for a in row)
    place = {}
    for rank, row in enumerate(actions):
        for i, a in enumerate(row):
            place[a.kind, a.microbatch, virtual_stage(name, rank, a.chunk, pp)] = (rank, i)

    def inputs(kind, mb, vs):
        if kind == "F":
            return [("F", mb, vs - 1)] if vs > 0 else []
        if kind == "B":
            return [("F", mb, vs)] + ([("B", mb, vs + 1)] if vs + 1 < nvs else [])
        return [("B", mb, vs)]

    @cache
    def end(rank, i):
        kind, mb, chunk = actions[rank][i]
        d = chunk_d[rank][chunk]
        s = end(rank, i - 1) if i else 0.0
        for key in inputs(kind, mb, virtual_stage(name, rank, chunk, pp)):
            home, j = place[key]
            hop = d.p2p if home != rank else 0.0
            s = max(s, end(home, j) + hop)
        return s + d.of(kind, split)

    ends = [[end(r, i) for i in range(len(row))] for r, row in enumerate(actions)]
    starts = [
        [e - chunk_d[r][a.chunk].of(a.kind, split) for e, a in zip(row_e, actions[r], strict=True)]
        for r, row_e in enumerate(ends)
    ]
    return starts, ends


durations = st.builds(
    Durations,
    f=st.sampled_from([0.5, 1.0, 1.5]),
    b=st.sampled_from([0.75, 1.0, 2.0]),
    w=st.sampled_from([0.0, 0.25, 1.0]),
    p2p=st.sampled_from([0.0, 0.1, 0.7]),
)


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(PLAIN),
    pp=st.integers(1, 4),
    m=st.integers(1, 9),
    v=st.integers(1, 3),
    data=st.data(),
)
def test_fast_pass_equals_the_reference_with_every_input(name, pp, m, v, data):
    try:
        actions = build(name, pp, m, v)
    except ScheduleError:
        return
    chunks = chunks_per_rank(ScheduleName(name), v)
    chunk_d = [[data.draw(durations) for _ in range(chunks)] for _ in range(pp)]
    t = simulate(name, actions, chunk_d, v)
    starts, ends = reference(ScheduleName(name), actions, chunk_d)
    assert _close(t.ends, ends)
    assert _close(t.starts, starts)


def _close(got, want) -> bool:
    return all(
        len(g) == len(w) and all(abs(a - b) < 1e-9 for a, b in zip(g, w, strict=True))
        for g, w in zip(got, want, strict=True)
    )
