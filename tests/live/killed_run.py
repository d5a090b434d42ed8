"""A run whose rank 5 is killed at step 10, as `meshscope probe --dp 2 --tp 2 --pp 2 --steps
60 --kill-at 5:10` leaves it in the store, built from synthetic records shaped like the
probe's (support.records) and fed through the app's own store.

dp2 x tp2 x pp2 in tp-pp-dp order: rank = tp + 2 pp + 4 dp, so rank 5 is (dp1, pp0, tp1).
Killed at the start of step 10, it sends nothing of that step; its step-9 record was spooled
but never sent (the kill closed its socket first). The others block in step 10 where the
probe's engine would, and each sends a partial record of it (ProbeRecord.stopped):

    rank 4  (dp1 pp0 tp0)  the TP all-reduce inside F of microbatch 0, with rank 5
    rank 7  (dp1 pp1 tp1)  receiving microbatch 0 from rank 5
    rank 6  (dp1 pp1 tp0)  receiving microbatch 0 from rank 4 (itself blocked)
    ranks 0-3 (dp0)        their whole pipeline, then the DP all-reduce with dp1

So 80 records exist in the spools (8 ranks x steps 0-9), 79 reached the server, and the
400 rank-steps of steps 10-59 were never produced.
"""

from __future__ import annotations

from support import records, run_info

from app.core.inputs.protocol import ProbeRecord

RUN, STEPS, KILLED, AT = "killed-5-10", 60, 5, 10
T0 = 1_700_000_000.0
FAIL_S = 0.8  # when the survivors' collectives fail, seconds after their step-10 start
ERROR = "rank {rank} (dp{dp} pp{pp} tp{tp}, node 0) failed at step 10 during {where}: {what}"


def info(run: str = RUN):
    return run_info(run, dp=2, tp=2, pp=2, steps=STEPS)


def _partial(full: dict, events: list[dict], where: str, what: str) -> dict:
    c = full["coord"]
    why = ERROR.format(rank=full["rank"], **c, where=where, what=what)
    rec = {k: v for k, v in full.items() if k not in ("events", "loss")}
    return rec | {"events": events, "stopped": why}


def blocked_step(inf, step: int = AT, t0: float | None = None, culprit_error: bool = False):
    """Step ``step`` of every rank but the killed one, each cut where it blocks; with
    ``culprit_error`` rank 5 raised in its own forward instead (a partial record too)."""
    full = {r["rank"]: r for r in records(inf, step, t0=t0)}
    out = []
    for rank, rec in full.items():
        mb0 = {"microbatch": 0, "chunk": 0}
        if rank == KILLED:
            if not culprit_error:
                continue
            f = next(e for e in rec["events"] if e["kind"] == "F" and e["microbatch"] == 2)
            kept = [e for e in rec["events"] if e["end"] <= f["start"]]
            boom = {"kind": "F", "microbatch": 2, "chunk": 0, "start": f["start"],
                    "end": f["start"] + 0.003}  # fmt: skip
            where, what = "pipeline action F microbatch 2 chunk 0", "CUDA out of memory"
            out.append(_partial(rec, [*kept, boom], where, what))
        elif rank in (0, 1, 2, 3):  # whole pipeline, then the dp all-reduce with dp1
            pipe = [e for e in rec["events"] if e["kind"] not in ("dp", "optim")]
            dp = next(e for e in rec["events"] if e["kind"] == "dp")
            events = [*pipe, {"kind": "dp", "start": dp["start"], "end": FAIL_S}]
            peer = rank + 4
            what = f"dp all-reduce over ranks [{rank}, {peer}] failed: Connection closed by peer"
            out.append(_partial(rec, events, "dp gradient all-reduce", what))
        elif rank == 4:  # its first forward, in the tp all-reduce with rank 5
            events = [{"kind": "F", **mb0, "start": 0.0, "end": 0.004},
                      {"kind": "tp", **mb0, "start": 0.004, "end": FAIL_S}]  # fmt: skip
            what = "tp all-reduce over ranks [4, 5] failed: Connection closed by peer"
            out.append(_partial(rec, events, "pipeline action F microbatch 0 chunk 0", what))
        else:  # 6, 7: waiting for their first forward's input
            src = 4 if rank == 6 else 5
            events = [{"kind": "pp_recv", **mb0, "start": 0.0, "end": FAIL_S, "peer": src}]
            what = f"receive from rank {src} (tag 1) failed: Connection closed by peer"
            out.append(_partial(rec, events, "pipeline action F microbatch 0 chunk 0", what))
    return out


def store_ops(inf=None, culprit_error: bool = False, now: float = T0) -> list[tuple]:
    """The store ops ingest would have committed for the killed run, then liveness's verdict:
    every rank dead (the killed one first), the run failed."""
    inf = inf or info()
    ops = [("hello", (inf, rank, 0, now)) for rank in range(inf.world_size)]
    for step in range(AT):
        for rec in records(inf, step, t0=T0 + step):
            if (rec["rank"], step) != (KILLED, AT - 1):  # in rank 5's spool, never sent
                ops.append(("record", (ProbeRecord.model_validate(rec), now + step)))
    for rec in blocked_step(inf, t0=T0 + AT, culprit_error=culprit_error):
        ops.append(("stop", (ProbeRecord.model_validate(rec), now + AT)))
    reason = "rank(s) 0, 1, 2, 3, 4, 5, 6, 7 stopped reporting"
    ops.append(("event", (inf.run, KILLED, "first_dead", f"rank {KILLED} seen dead first",
                          now + AT)))  # fmt: skip
    ops.append(("status", (inf.run, "failed", T0 + AT + FAIL_S, reason, now + AT + 1)))
    return ops


def healthy_ops(run: str = "healthy-run", steps: int = 12, now: float = T0) -> list[tuple]:
    """A run that finished: every rank, every step (rank 3 slower than the rest)."""
    inf = run_info(run, dp=2, tp=2, pp=2, steps=steps)
    ops = [("hello", (inf, 0, 0, now))]
    for step in range(steps):
        for rec in records(inf, step, t0=T0 + step, slow_rank=3):
            ops.append(("record", (ProbeRecord.model_validate(rec), now + step)))
    ops.append(("status", (run, "done", None, "", now + steps)))
    return ops


def tp_heavy(inf, step: int) -> list[dict]:
    """One step of every rank with its TP all-reduces stretched: 80% of each F/B on rank 0,
    50% on the others, so the busiest rank's TP share and the mean rank's differ."""
    out = []
    for rec in records(inf, step, t0=T0 + step):
        q = 0.8 if rec["rank"] == 0 else 0.5
        actions = {(e["microbatch"], e["end"]): e for e in rec["events"] if e["kind"] in "FB"}
        for e in rec["events"]:
            if e["kind"] == "tp":
                a = actions[(e["microbatch"], e["end"])]
                e["start"] = a["end"] - q * (a["end"] - a["start"])
        out.append(rec)
    return out


def tp_heavy_ops(run: str = "tp-heavy", steps: int = 3, now: float = T0) -> list[tuple]:
    inf = run_info(run, dp=1, tp=2, pp=2, steps=steps)
    ops = [("hello", (inf, 0, 0, now))]
    for step in range(steps):
        ops += [
            ("record", (ProbeRecord.model_validate(r), now + step)) for r in tp_heavy(inf, step)
        ]
    ops.append(("status", (run, "done", None, "", now + steps)))
    return ops
