"""One run, one status: what /runs, /runs/{run} and their JSON say about a run, decided here
and nowhere else.

    waiting     announced (a rank said hello), no step record yet
    live        running
    stale       liveness lost sight of ranks (silent, or a restarted server waits for them)
    incomplete  every rank finished or ended, records still in the probe's spools; or an
                import that had no file for some ranks (their records exist nowhere here)
    failed      a rank died: the first rank to fail, the step, what it was doing; what each
                other rank was blocked in; records received, in the spools, never produced
    complete    every rank stored its final step

**Who failed first.** A rank whose step fails on a collective or a receive sends a partial record
of that step (``ProbeRecord.stopped``, kept in the store's ``stops``): the event that ended last is
what it was blocked in. A rank that fails by itself (its step raised in its own compute) ends in
compute; a killed rank sends nothing. So the first to fail is, in order: a rank whose partial
record ends in its own work (the earliest); else a rank with no record of the step the others
stopped in, the dead ones first, the one liveness saw dead first before the others, then the one
most peers were receiving from; else the rank that stopped earliest.

**Which records exist.** The run stopped in step S (the latest step any unfinished rank reached). A
rank that sent a partial record of step s produced steps 0..s-1; any other unfinished rank produced
0..S-1 (its peers finished S-1, which needs its part of it); finished ranks produced every step.
Produced minus received is what the spools hold; planned minus produced was never run, and is never
counted as "not yet received". A run that ended cleanly (incomplete) ran every step on every rank.

``decide`` is pure (its reads come in as values and one callable); ``words`` renders a
verdict in a language through the catalogue's ``t``; ``of_run`` reads the store for both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

WAITS = ("tp", "dp", "pp_recv", "pp_send")  # a rank inside one of these waits for its peers
COMPUTE = ("F", "B", "W")
STATUS = {"running": "live", "done": "complete", "incomplete": "incomplete", "failed": "failed",
          "stale": "stale"}  # fmt: skip
LISTED = 8  # ranks named in one list before "and N more"
# The end of the reason app/importers/trace_store.py stores for an import missing rank files:
# such a run is incomplete, but no probe spool holds what is missing.
IMPORT_ABSENT = "absent from the import"
GROUPS = 6  # kinds of wait listed one per line before "N more ranks in other waits"


def last_event(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """The event that ended last (on a tie the later start: the innermost). In a partial
    record that is the interval the failure interrupted."""
    events = (record or {}).get("events") or []
    if not events:
        return None
    return max(events, key=lambda e: (e["end"], e["start"]))


def action_of(record: dict[str, Any] | None, step: int | None = None) -> dict[str, Any] | None:
    """A record's last event as an action: kind, microbatch, chunk, peer, and for a TP
    all-reduce the F/B/W it sat in (``inside``)."""
    ev = last_event(record)
    if ev is None:
        return None
    out = {k: ev.get(k) for k in ("kind", "microbatch", "chunk", "peer")}
    out["step"] = step if step is not None else (record or {}).get("step")
    if ev["kind"] == "tp":
        around = [
            e for e in record["events"]
            if e["kind"] in COMPUTE and e.get("microbatch") == ev.get("microbatch")
            and e.get("chunk") == ev.get("chunk") and e["start"] <= ev["start"]
        ]  # fmt: skip
        out["inside"] = max(around, key=lambda e: e["start"])["kind"] if around else None
    return out


def decide(
    status: str,
    world: int,
    steps: int,
    states: dict[int, str],
    rows: dict[int, tuple[int, int, int]],
    stops: dict[int, dict[str, Any]],
    last_record: Callable[[int], dict[str, Any] | None],
    first_dead: int | None = None,
    received: int | None = None,
    no_file: list[int] | None = None,
) -> dict[str, Any]:
    """The verdict of one run from its stored facts.

    ``status``: the store's (running, stale, incomplete, failed, done); ``states``: rank ->
    liveness state; ``rows``: rank -> (attempt, last step, count) of its current records;
    ``stops``: rank -> its partial record of the current attempt; ``last_record(rank)``: that
    rank's newest finished record (read only for the rank that failed first). ``received``
    (the run's count of current records) may stand in for ``rows`` unless the run failed.
    ``no_file``: the ranks an incomplete import had no file for (None for a probe's run)."""
    planned = world * steps
    if received is None:
        received = sum(n for _, _, n in rows.values())
    out: dict[str, Any] = {
        "status": STATUS.get(status, status),
        "steps": steps,
        "step": None,
        "first": None,
        "blocked": [],
        "silent": [],
        "waiting_ranks": [],
        "records": {"planned": planned, "received": received, "in_spool": 0,
                    "never_produced": 0, "no_file": 0},
    }  # fmt: skip
    if status == "failed" or (stops and status != "done"):
        # A partial record is a failure however liveness sees the rank now (an upload of
        # the spools makes it speak again): the run failed.
        out["status"] = "failed"
        _failed(out, world, steps, states, rows, stops, last_record, first_dead)
    elif status == "running" and not received:
        out["status"] = "waiting"
    elif status == "incomplete" and no_file is not None:  # an import short of rank files
        out["records"]["no_file"] = max(planned - received, 0)
        out["no_file_ranks"] = no_file
    elif status == "incomplete":  # ended cleanly: every rank ran every step
        out["records"]["in_spool"] = max(planned - received, 0)
    elif status == "stale":
        out["waiting_ranks"] = sorted(r for r, s in states.items() if s in ("stale", "missing"))
    return out


def _failed(out, world, steps, states, rows, stops, last_record, first_dead) -> None:
    last = {r: rows[r][1] if r in rows else -1 for r in range(world)}
    unfinished = [r for r in range(world) if last[r] < steps - 1]
    if not unfinished:
        return

    def reached(r: int) -> int:  # the step rank r was in when it stopped
        return stops[r]["step"] if r in stops else last[r] + 1

    stop_at = max(reached(r) for r in unfinished)
    actions = {r: action_of(stops[r], stops[r]["step"]) for r in unfinished if r in stops}
    waiting = {r for r, a in actions.items() if a is not None and a["kind"] in WAITS}
    own = sorted(
        (r for r in actions if r not in waiting),
        key=lambda r: (stops[r]["t0"] + (last_event(stops[r]) or {"end": 0.0})["end"], r),
    )
    silent = [r for r in unfinished if r not in stops]
    named: dict[int, int] = {}  # how many blocked ranks were receiving from each rank
    for r in waiting:
        peer = actions[r].get("peer")
        if actions[r]["kind"] == "pp_recv" and peer is not None:
            named[peer] = named.get(peer, 0) + 1
    silent.sort(
        key=lambda r: (states.get(r) != "dead", r != first_dead, -named.get(r, 0), last[r], r)
    )
    earliest = sorted(waiting, key=lambda r: (stops[r]["t0"] + last_event(stops[r])["end"], r))
    first = (own or silent or earliest)[0]

    if first in stops:
        info = {"rank": first, "step": stops[first]["step"], "recorded": True,
                "action": actions[first], "error": stops[first].get("stopped"),
                "last_step": last[first] if last[first] >= 0 else None}  # fmt: skip
    else:
        previous = last_record(first) if last[first] >= 0 else None
        info = {"rank": first, "step": stop_at, "recorded": False,
                "action": action_of(previous), "error": None,
                "last_step": last[first] if last[first] >= 0 else None}  # fmt: skip
    out["first"] = info
    out["step"] = info["step"]
    out["blocked"] = [
        {"rank": r, "step": stops[r]["step"], "on": first, "action": actions[r]}
        for r in sorted(stops)
        if r != first and r in actions
    ]
    out["silent"] = [
        {"rank": r, "last_step": last[r] if last[r] >= 0 else None}
        for r in sorted(silent)
        if r != first
    ]
    produced = 0
    in_spool = 0
    for r in range(world):
        if r not in unfinished:
            made = steps
        elif r in stops:
            made = stops[r]["step"]
        else:
            made = max(stop_at, last[r] + 1)
        produced += made
        in_spool += max(made - (rows[r][2] if r in rows else 0), 0)
    records = out["records"]
    records["in_spool"] = in_spool
    records["never_produced"] = max(records["planned"] - produced, 0)


# -- words -----------------------------------------------------------------------------------
def _fmt(t: Callable[[str], str], key: str, **values: Any) -> str:
    return t(key).format(**values)


def listed(ranks: list[int], more: str) -> str:
    """The first LISTED ranks, "0, 1, 2"; past them ``more`` (the catalogue's
    live.verdict.more, "{list} and {n} more") says the rest. Run events word theirs alike."""
    shown = ", ".join(str(r) for r in ranks[:LISTED])
    if len(ranks) <= LISTED:
        return shown
    return more.replace("{list}", shown).replace("{n}", str(len(ranks) - LISTED))


def _ranks(t, ranks: list[int]) -> str:
    if len(ranks) == 1:
        return _fmt(t, "live.verdict.rank_one", rank=ranks[0])
    return _fmt(t, "live.verdict.rank_many", list=listed(ranks, t("live.verdict.more")))


def describe(t, action: dict[str, Any] | None) -> str:
    """An action in words: "forward of microbatch 2", "TP all-reduce in backward of
    microbatch 0", "receiving microbatch 1 from rank 5", "DP all-reduce"."""
    if action is None:
        return t("live.act.nothing")
    kind, mb, peer = action["kind"], action.get("microbatch"), action.get("peer")
    name = t(f"live.kind.{kind}")
    if kind == "pp_recv" and mb is not None and peer is not None:
        return _fmt(t, "live.act.recv", mb=mb, peer=peer)
    if kind == "pp_send" and mb is not None and peer is not None:
        return _fmt(t, "live.act.send", mb=mb, peer=peer)
    if mb is None:
        return name
    if kind == "tp" and action.get("inside"):
        inside = t(f"live.kind.{action['inside']}")
        return _fmt(t, "live.act.tp_in", kind=name, inside=inside, mb=mb)
    return _fmt(t, "live.act.of_mb", kind=name, mb=mb)


def words(v: dict[str, Any], t: Callable[[str], str]) -> dict[str, Any]:
    """The verdict in one language: ``label`` (the one badge), ``summary`` (the runs
    list's short line) and ``lines`` (the run page's sentences)."""
    status, rec = v["status"], v["records"]
    label, summary, lines = t(f"live.status.{status}"), "", []
    if status == "incomplete" and rec["no_file"]:
        summary = _fmt(t, "live.verdict.short_no_file", n=rec["no_file"])
        lines.append(_fmt(t, "live.verdict.no_file", ranks=_ranks(t, v["no_file_ranks"]),
                          n=rec["no_file"]))  # fmt: skip
    elif status == "incomplete" and rec["in_spool"]:
        summary = _fmt(t, "live.verdict.short_incomplete", n=rec["in_spool"])
        lines.append(_fmt(t, "live.unreceived", n=rec["in_spool"]))
    elif status == "stale":
        silent = _ranks(t, v["waiting_ranks"]) if v["waiting_ranks"] else ""
        summary = _fmt(t, "live.verdict.short_stale", ranks=silent) if silent else ""
        lines.append(
            _fmt(t, "live.verdict.stale", ranks=silent or "—", received=rec["received"],
                 planned=rec["planned"])
        )  # fmt: skip
    elif status == "failed" and v["first"] is not None:
        lines += _failed_words(v, t)
        summary = _short_failed(v, t)
    return {"label": label, "summary": summary, "lines": lines}


def _short_failed(v, t) -> str:
    f = v["first"]
    if f["recorded"]:
        doing = _fmt(t, "live.verdict.short_during", action=describe(t, f["action"]))
    elif f["action"] is not None:
        doing = _fmt(t, "live.verdict.short_after", action=describe(t, f["action"]),
                     last=f["last_step"])  # fmt: skip
    else:
        doing = t("live.verdict.short_nothing")
    return _fmt(t, "live.verdict.short_failed", rank=f["rank"], step=f["step"], doing=doing)


def _failed_words(v, t) -> list[str]:
    f, rec = v["first"], v["records"]
    if f["recorded"]:
        first = _fmt(t, "live.verdict.first_in", rank=f["rank"], step=f["step"],
                     action=describe(t, f["action"]), error=f["error"] or "")  # fmt: skip
    elif f["action"] is not None:
        first = _fmt(t, "live.verdict.first_silent", rank=f["rank"], step=f["step"],
                     last=f["last_step"], action=describe(t, f["action"]))  # fmt: skip
    else:
        first = _fmt(t, "live.verdict.first_none", rank=f["rank"], step=f["step"])
    lines = [first]
    groups: dict[str, list[int]] = {}
    for b in v["blocked"]:
        groups.setdefault(describe(t, b["action"]), []).append(b["rank"])
    if groups:  # one line per wait, the ranks in it: a list a phone can read
        lines.append(_fmt(t, "live.verdict.blocked", rank=f["rank"]))
        shown = list(groups.items())[:GROUPS]
        lines += [_fmt(t, "live.verdict.group", what=what, ranks=_ranks(t, ranks))
                  for what, ranks in shown]  # fmt: skip
        rest = sum(len(ranks) for _, ranks in list(groups.items())[GROUPS:])
        if rest:
            lines.append(_fmt(t, "live.verdict.more_groups", n=rest))
    if v["silent"]:
        ranks = _ranks(t, [s["rank"] for s in v["silent"]])
        lines.append(_fmt(t, "live.verdict.silent", ranks=ranks, step=v["step"]))
    key = "live.verdict.records" if rec["in_spool"] else "live.verdict.records_all"
    lines.append(
        _fmt(t, key, received=rec["received"], spool=rec["in_spool"],
             never=rec["never_produced"], step=v["step"], steps=v["steps"])
    )  # fmt: skip
    if rec["in_spool"]:
        lines.append(t("live.verdict.upload"))
    return lines


def of_run(reader, row: dict[str, Any], states_of: Callable[[dict], dict[int, str]],
           rows=None) -> dict[str, Any]:  # fmt: skip
    """Read what ``decide`` needs for one stored run (``row`` from ``Reader.run`` or
    ``Reader.runs``) and decide. ``states_of(rows)`` gives rank -> liveness state (unwatched
    ranks included). Per-rank rows are read only when not given and needed: the run failed
    (or holds partial records), or ``row`` has no record count (``Reader.runs`` rows have
    one), so a list of runs costs one small query per unfinished run and one per failure."""
    run, status = row["run"], row["status"]
    stops = reader.stops(run, row["attempt"]) if status != "done" else {}
    failed = status == "failed" or bool(stops)
    received = None
    imported = status == "incomplete" and (row.get("reason") or "").endswith(IMPORT_ABSENT)
    if rows is None:
        if failed or imported or row.get("records") is None:
            rows = reader.rank_rows(run)
        else:
            rows, received = {}, row["records"]
    first_dead = reader.first_dead(run) if failed else None
    no_file = [r for r in range(row["world"]) if r not in rows] if imported else None
    return decide(status, row["world"], row["steps"], states_of(rows), rows, stops,
                  lambda rank: reader.last_record(run, rank), first_dead, received,
                  no_file)  # fmt: skip
