"""The queries of one /metrics scrape: which runs to export, and per run one row set of its
newest step. A ``Reader`` (per-thread read-only WAL connections) with two more queries, so
a scrape costs one small query for the run list and one indexed query per exported run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.live.store_read import Reader

UNFINISHED = ("running", "stale")  # what liveness still watches; failed and done are over
_RUN_COLUMNS = "run, world, steps, status, info"


@dataclass(frozen=True)
class NewestStep:
    """One run's newest step over the ranks that reported it: sums of the breakdown
    columns (seconds, summed over those ranks) and the slowest ranks first."""

    step: int
    ranks: int
    step_time_s: float  # the slowest rank's: the step ends when its last rank does
    rank_s: float  # sum over ranks of each rank's step time
    compute_s: float
    tp_s: float
    dp_s: float
    pp_wait_s: float
    slowest: list[tuple[int, float]]  # (rank, step time), slowest first, at most N
    beyond: dict[str, float] = field(default_factory=dict)  # cp_s, ep_s sums: runs with them


class MetricsReader(Reader):
    def exported_runs(self, unfinished: int, finished: int) -> list[dict[str, Any]]:
        """Unfinished runs, newest first, at most ``unfinished``; then the newest
        ``finished`` others. Bounds the series however many runs the store holds."""
        marks = ", ".join("?" * len(UNFINISHED))
        sql = f"SELECT {_RUN_COLUMNS} FROM runs WHERE status {{}} IN ({marks})"
        sql += " ORDER BY created DESC LIMIT ?"
        live = self._rows(sql.format(""), (*UNFINISHED, unfinished))
        ended = self._rows(sql.format("NOT"), (*UNFINISHED, finished)) if finished else []
        return live + ended

    def newest_step(
        self, run: str, slowest: int, beyond: tuple[str, ...] = ()
    ) -> NewestStep | None:
        """The newest step's totals and its ``slowest`` slowest ranks, in one query: the
        window sums cover every row of the step before the LIMIT keeps the first few.
        ``beyond``: cp and/or ep, summed too for a run that has them (a database from before
        their columns is never asked: its runs have neither)."""
        more = "".join(f", SUM({a}_s) OVER w" for a in beyond)
        rows = (
            self._conn()
            .execute(
                "SELECT step, rank, step_time_s, COUNT(*) OVER w, MAX(step_time_s) OVER w,"
                " SUM(step_time_s) OVER w, SUM(compute_s) OVER w, SUM(tp_s) OVER w,"
                f" SUM(dp_s) OVER w, SUM(pp_wait_s) OVER w{more} FROM steps"
                " WHERE run = ? AND superseded = 0 AND step ="
                " (SELECT MAX(step) FROM steps WHERE run = ? AND superseded = 0)"
                " WINDOW w AS () ORDER BY step_time_s DESC, rank LIMIT ?",
                (run, run, max(slowest, 1)),
            )
            .fetchall()
        )
        if not rows:
            return None
        step, _, _, n, top, total, compute, tp, dp, wait, *sums = rows[0]
        ranked = [(rank, t) for _, rank, t, *_ in rows][:slowest]
        extra = dict(zip(beyond, sums, strict=True))
        return NewestStep(step, n, top, total, compute, tp, dp, wait, ranked, extra)
