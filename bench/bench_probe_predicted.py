"""Measured records -> the simulator's inputs, and measured makespan / bubble to compare.

Pure functions over spooled record dicts (app.core.inputs.protocol.ProbeRecord as JSON); used by
bench_probe.py. Definitions match app.core.simulate: makespan runs from the first compute
start to the last compute end of one pipeline replica (one dp, tp coordinate), and
bubble = idle / (pp * makespan) with idle = pp * makespan - sum of F/B/W time.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from app.core.simulate import Durations

COMPUTE = ("F", "B", "W")


def p2p_latency(records: list[dict]) -> float:
    """Median time a message spends in flight: the k-th send from a to b pairs with b's k-th
    receive from a (both sides run the same schedule order); in flight from the later of
    posting the send and posting the receive until the receive completes. Same-machine
    clocks: absolute time = t0 (wall clock at step start) + offset."""
    sends, recvs = defaultdict(list), defaultdict(list)
    for r in records:
        for e in r["events"]:
            at = (r["t0"] + e["start"], r["t0"] + e["end"])
            if e["kind"] == "pp_send":
                sends[(r["step"], r["rank"], e["peer"])].append(at)
            elif e["kind"] == "pp_recv":
                recvs[(r["step"], e["peer"], r["rank"])].append(at)
    flights = []
    for key, posted in sends.items():
        for (send_start, _), (recv_start, recv_end) in zip(
            sorted(posted), sorted(recvs.get(key, [])), strict=False
        ):
            flights.append(max(recv_end - max(send_start, recv_start), 0.0))
    return statistics.median(flights) if flights else 0.0


def measured_durations(records: list[dict], pp: int) -> list[Durations]:
    """Mean F, B, W per pipeline stage (over steps, microbatches, chunks and replicas)."""
    spans = defaultdict(lambda: defaultdict(list))
    for r in records:
        for e in r["events"]:
            if e["kind"] in COMPUTE:
                spans[r["coord"]["pp"]][e["kind"]].append(e["end"] - e["start"])
    p2p = p2p_latency(records)
    mean = statistics.fmean
    return [
        Durations(
            f=mean(spans[s]["F"]),
            b=mean(spans[s]["B"] or [0.0]),
            w=mean(spans[s]["W"] or [0.0]),
            p2p=p2p,
        )  # fmt: skip
        for s in range(pp)
    ]


def measured_timeline(records: list[dict], pp: int) -> tuple[float, float]:
    """Mean (makespan seconds, bubble fraction) over steps and pipeline replicas."""
    replicas = defaultdict(list)
    for r in records:
        replicas[(r["step"], r["coord"]["dp"], r["coord"]["tp"])].append(r)
    makespans, bubbles = [], []
    for ranks in replicas.values():
        spans = [
            (r["t0"] + e["start"], r["t0"] + e["end"])
            for r in ranks
            for e in r["events"]
            if e["kind"] in COMPUTE
        ]
        makespan = max(end for _, end in spans) - min(start for start, _ in spans)
        busy = sum(end - start for start, end in spans)
        makespans.append(makespan)
        bubbles.append(1.0 - busy / (pp * makespan))
    return statistics.fmean(makespans), statistics.fmean(bubbles)
