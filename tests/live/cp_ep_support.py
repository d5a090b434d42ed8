"""A run with context (cp) and expert (ep) parallelism, shaped as an import stores it: each
rank's F holds a cp exchange, its B an ep all-to-all (issue 25's measured cp/ep)."""

from __future__ import annotations

from collections.abc import Callable

from support import SHAPE, records

from app.core.inputs.protocol import ProbeRecord, RunInfo, run_layout


def cp_ep_info(run: str, dp=1, tp=1, pp=2, cp=2, ep=2, steps=10, m=2) -> RunInfo:
    return RunInfo(
        run=run, dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, order="tp-cp-ep-dp-pp", gpus_per_node=8,
        schedule="1f1b", microbatches=m, virtual_stages=1, steps=steps, dtype="bf16",
        device="cuda", model=SHAPE,
    )  # fmt: skip


def cp_ep_records(info: RunInfo, step: int, t0: float = 1000.0) -> list[ProbeRecord]:
    """Every rank's step: per microbatch an F of 10 ms with a 2 ms cp exchange inside, a B of
    20 ms with a 3 ms ep all-to-all inside (ep only when the run has it), then dp and optim."""
    layout = run_layout(info)
    out = []
    for rank in range(layout.world_size):
        c = layout.coord(rank)
        events, t = [], 0.0
        for mb in range(info.microbatches):
            label = {"microbatch": mb, "chunk": 0}
            events.append({"kind": "F", **label, "start": t, "end": t + 0.010})
            events.append({"kind": "cp", "start": t + 0.004, "end": t + 0.006})
            events.append({"kind": "B", **label, "start": t + 0.010, "end": t + 0.030})
            if info.ep > 1:
                events.append({"kind": "ep", "start": t + 0.015, "end": t + 0.018})
            t += 0.030
        events += [{"kind": "dp", "start": t, "end": t + 0.002},
                   {"kind": "optim", "start": t + 0.002, "end": t + 0.003}]  # fmt: skip
        coord = {"dp": c.dp, "pp": c.pp, "tp": c.tp, "cp": c.cp, "ep": c.ep}
        out.append(ProbeRecord.model_validate({
            "run": info.run, "rank": rank, "coord": coord, "node": layout.node(rank),
            "step": step, "t0": t0 + step, "events": events,
        }))  # fmt: skip
    return out


def slow_cp_records(
    info: RunInfo, step: int, slow: set[int], seconds: float = 0.010
) -> list[ProbeRecord]:
    """``cp_ep_records`` with the cp exchanges of the ``slow`` ranks lasting ``seconds`` (5x as
    long by default, 10 ms, not 2): a slow CP link, each member's compute as its peers'."""
    out = []
    for r in cp_ep_records(info, step):
        if r.rank in slow:
            events = [e.model_copy(update={"end": e.start + seconds}) if e.kind == "cp" else e
                      for e in r.events]  # fmt: skip
            r = r.model_copy(update={"events": events})
        out.append(r)
    return out


def plain_records(info: RunInfo, step: int) -> list[ProbeRecord]:
    """A 3D run's probe-shaped records (tests/live/support.records), beside the cp/ep runs."""
    return [ProbeRecord.model_validate(r) for r in records(info, step, t0=2000.0 + step)]


def stored_ops(runs: dict[RunInfo, Callable[[RunInfo, int], list]], steps: int = 3) -> list:
    """Store ops (conftest.stored_server): each run's hello, then each step's records of every
    run, made by its function."""
    ops = [("hello", (info, 0, 0, 1.0)) for info in runs]
    for step in range(steps):
        for info, make in runs.items():
            ops += [("record", (r, 1.0)) for r in make(info, step)]
    return ops
