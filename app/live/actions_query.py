"""Whole-run queries over a run's action segments (app/live/actions_segments.py), in DuckDB:
the phase table, each rank's medians for the run's stragglers, the current actions as one
Parquet file. Each takes a DuckDB connection and the segment files, as
``Segments.query`` hands them.

Which rows count is the store's rule (app/live/store.py ``_record``), computed here over
every row the segments hold: a row of attempt a at step s is superseded iff the same rank
has an attempt a' > a whose first step is <= s; every other row is current.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from app.live.actions_segments import quoted

COMPUTE = "('F', 'B', 'W')"
AXES = ("dp", "pp", "tp", "cp", "ep")  # a rank's coordinate, in PHASES' column order
COLUMNS = (
    'id, rank, step, attempt, t0, dp, pp, tp, cp, ep, kind, microbatch, chunk, start, "end", peer'
)
# Per rank and attempt, the first step of the next attempt to start earlier: its rows from
# that step on are superseded (app/live/store.py _record and _supersede_older).
CUTS = """
SELECT rank, attempt, cut FROM (
  SELECT rank, attempt, min(start) OVER (PARTITION BY rank ORDER BY attempt DESC
           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS cut
  FROM (SELECT rank, attempt, min(step) AS start FROM {source} GROUP BY rank, attempt))
WHERE cut IS NOT NULL
"""
# per rank and kind over the current actions: steps seen, count, sum, mean, p50, p95
PHASES = """
SELECT rank, any_value(dp), any_value(pp), any_value(tp), any_value(cp), any_value(ep), kind,
  count(DISTINCT step), count(*), sum(d), avg(d), quantile_cont(d, [0.5, 0.95])
FROM (SELECT *, "end" - start AS d FROM cur WHERE kind IS NOT NULL)
GROUP BY rank, kind ORDER BY rank, kind
"""
# per current record: compute (each F/B/W less the waits over it), tp, dp,
# pp_wait, cp, ep and step time; then each rank's medians
MEDIANS = f"""
, per AS (SELECT id, any_value(rank) AS rank,
    sum(CASE WHEN kind IN {COMPUTE} THEN "end" - start - covered ELSE 0 END)
      AS compute,
    sum(CASE WHEN kind = 'tp' THEN "end" - start ELSE 0 END) AS tp,
    sum(CASE WHEN kind = 'dp' THEN "end" - start ELSE 0 END) AS dp,
    sum(CASE WHEN kind = 'pp_recv' THEN "end" - start ELSE 0 END) AS pp_wait,
    sum(CASE WHEN kind = 'cp' THEN "end" - start ELSE 0 END) AS cp,
    sum(CASE WHEN kind = 'ep' THEN "end" - start ELSE 0 END) AS ep,
    coalesce(max("end"), 0) AS step
  FROM cur GROUP BY id)
SELECT rank, median(compute), median(tp), median(dp), median(pp_wait), median(cp), median(ep),
  median(step)
FROM per GROUP BY rank ORDER BY rank
"""


def current(
    con: duckdb.DuckDBPyConnection,
    files: list[Path],
    first: int | None = None,
    last: int | None = None,
) -> str:
    """WITH clauses ending in ``cur``: the current actions of steps first..last. The dead
    rows' cuts (rank, attempt, first step of a later attempt) are found first, over three
    columns; a run never resumed has none and reads its segments with no join at all."""
    source = "read_parquet([" + ", ".join(f"'{quoted(f)}'" for f in files) + "])"
    con.execute(f"CREATE OR REPLACE TEMP TABLE dead AS {CUTS.format(source=source)}")
    (resumed,) = con.execute("SELECT count(*) FROM dead").fetchone()
    within = "" if first is None else f"step BETWEEN {int(first)} AND {int(last)}"
    if not resumed:
        return f"WITH cur AS (SELECT * FROM {source} {'WHERE ' + within if within else ''})\n"
    return f"""
WITH cur AS (SELECT a.* FROM {source} a ANTI JOIN dead d
               ON a.rank = d.rank AND a.attempt = d.attempt AND a.step >= d.cut
             {"WHERE " + within if within else ""})
"""


def current_keys(con: duckdb.DuckDBPyConnection, files: list[Path]) -> set[tuple[int, int, int]]:
    """(rank, step, attempt) of every current record: SQLite's ``superseded = 0`` rows."""
    if not files:
        return set()
    rows = con.execute(current(con, files) + "SELECT DISTINCT rank, step, attempt FROM cur")
    return set(rows.fetchall())


def phase_table(
    con: duckdb.DuckDBPyConnection, files: list[Path], first: int, last: int
) -> list[dict[str, Any]]:
    """Per rank (with its coordinate, cp and ep 0 in a run without them) and kind: steps
    seen, actions, and the total, mean, p50 and p95 of the action durations (quantile_cont:
    linear interpolation, as numpy's default percentile), over the current rows of steps
    first..last."""
    if not files:
        return []
    sql = current(con, files, first, last) + PHASES
    out: list[dict[str, Any]] = []
    for rank, *coord, kind, steps, n, total, mean, (p50, p95) in con.execute(sql).fetchall():
        if not out or out[-1]["rank"] != rank:
            out.append({"rank": rank, **dict(zip(AXES, coord, strict=True)), "kinds": {}})
        out[-1]["kinds"][kind] = {"steps": steps, "actions": n, "total_s": total,
                                  "mean_s": mean, "p50_s": p50, "p95_s": p95}  # fmt: skip
    return out


def rank_medians(
    con: duckdb.DuckDBPyConnection, files: list[Path], first: int, last: int
) -> dict[int, dict[str, float]]:
    """Per rank, the median over its current steps of: compute (F/B/W time less the union
    of the waits over it, ``covered`` in the segments, as app/core/traces/stragglers.py's
    _phase_times), tp, dp, pp_wait (receive), cp and ep time, and the step time (the last
    event's end)."""
    if not files:
        return {}
    sql = current(con, files, first, last) + MEDIANS
    names = ("compute", "tp", "dp", "pp_wait", "cp", "ep", "step")
    return {row[0]: dict(zip(names, row[1:], strict=True)) for row in con.execute(sql).fetchall()}


def export(
    con: duckdb.DuckDBPyConnection, files: list[Path], first: int, last: int, out: Path
) -> int:
    """The current actions of steps first..last as one Parquet file at ``out``, in step,
    rank, start order; how many rows."""
    if not files:  # an empty file of the same columns, so a reader sees the schema
        con.execute(
            "CREATE TABLE cur (id BIGINT, rank INTEGER, step BIGINT, attempt INTEGER,"
            " t0 DOUBLE, dp INTEGER, pp INTEGER, tp INTEGER, cp INTEGER, ep INTEGER,"
            " kind VARCHAR, microbatch INTEGER,"
            ' chunk INTEGER, start DOUBLE, "end" DOUBLE, peer INTEGER)'
        )
        sql = f"SELECT {COLUMNS} FROM cur"
    else:
        sql = current(con, files, first, last) + (
            f"SELECT {COLUMNS} FROM cur WHERE kind IS NOT NULL ORDER BY step, rank, start"
        )
    con.execute(f"COPY ({sql}) TO '{quoted(out)}' (FORMAT parquet)")
    return con.execute(f"SELECT count(*) FROM read_parquet('{quoted(out)}')").fetchone()[0]
