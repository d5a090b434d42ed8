"""A scenario's teaching units: f_time/b_time/w_time/p2p_time as the simulator's Durations
(one for every action, or one per rank and chunk), and the F they are scaled by."""

from __future__ import annotations

from app.core.inputs.scenario import Scenario
from app.core.inputs.scenario_fields import check_time_length
from app.core.schedules import stage_location
from app.core.simulate import Durations, DurationsLike, per_chunk


def teaching_durations(s: Scenario) -> DurationsLike | None:
    """f_time/b_time/w_time/p2p_time in abstract units, or None: one Durations, or
    durations[rank][chunk] when a time is a list (b defaults to f, w to 0, entry by entry)."""
    f = s.times("f_time")
    if f is None:
        return None
    times = {"f_time": f, "b_time": s.times("b_time") or f, "w_time": s.times("w_time") or (0.0,)}
    for name, values in times.items():
        check_time_length(name, len(values), s.pp, s.chunks)  # copies skip validation
    p2p, pp, chunks = s.p2p_time or 0.0, s.pp, s.chunks
    if all(len(v) == 1 for v in times.values()):
        return Durations(f=f[0], b=times["b_time"][0], w=times["w_time"][0], p2p=p2p, fb=s.fb_time)
    at = [stage_location(s.schedule, vs, pp) for vs in range(pp * chunks)]
    rows = {k: [[v[r % len(v)]] * chunks for r in range(pp)] for k, v in times.items()}
    for k, v in times.items():
        for vs, (rank, chunk) in enumerate(at if len(v) == pp * chunks > pp else ()):
            rows[k][rank][chunk] = v[vs]  # model order -> (rank, chunk) of the placement
    f_, b_, w_ = rows.values()
    return [
        [Durations(f_[r][c], b_[r][c], w_[r][c], p2p, fb=s.fb_time) for c in range(chunks)]
        for r in range(pp)
    ]


def teaching_f(d: DurationsLike, pp: int, chunks: int) -> float:
    """Rank 0's mean chunk F (a single Durations' own): what teaching units are scaled by."""
    return d.f if isinstance(d, Durations) else Durations.mean(per_chunk(d, pp, chunks)[0]).f
