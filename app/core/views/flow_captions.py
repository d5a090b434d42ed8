"""One sentence per animation frame: what every stage does in the step that starts there.

The core decides what a caption says: which stage runs which action on which GPUs, which
pipeline hand-offs are under way, who waits in the bubble, who is in the step's tail. The page
only words it, from the catalogues' ``flow`` templates (app/i18n/locales), so every language
says the same facts.

A caption is a list of clauses ``[key, arg, ...]``; the page fills template ``flowcap.<key>``
with the args as ``{0}``, ``{1}``, ... A frame covers ``[t_k, t_k+1)``, so an action runs in it
when ``start <= t_k < end`` (as ``flow.active_stages_at`` and the page's ``lookup.eventAt``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.schedules import ScheduleName, chunks_per_rank

MAX_RUN_CLAUSES = 4  # past this many busy stages, "N more": a sentence, not a table
MAX_SEND_CLAUSES = 3
MAX_LISTED_GPUS = 8  # a stage's GPUs by number up to this many, else their count
# frames x stages past which no captions are made (the page says they are left out). Near it
# (pp=8, 1F1B, 512 micro-batches: 11807 frames) they cost 0.84 MB beside the flow's 1.43 MB
# and 0.17-0.34 s (idle vs loaded 2-core box); nobody reads 10^4 frames one sentence each.
CAPTION_BUDGET = 100_000
TAIL_CLAUSE = {"dp": "tail_dp", "optim": "tail_optim"}


def action_label(kind: str, microbatch: int, chunk: int, chunks: int) -> str:
    """The timeline's block label (static/js/timeline.js ``label``): F3, or B0.1 = micro-batch
    0 on chunk 1 when each GPU holds several chunks."""
    return f"{kind}{microbatch}.{chunk}" if chunks > 1 else f"{kind}{microbatch}"


def span_list(numbers: list[int]) -> str:
    """Sorted numbers as runs: [0, 1, 2, 5] -> "0–2,5" (a long list of stages stays short)."""
    out: list[str] = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        out.append(str(numbers[i]) if j == i else f"{numbers[i]}–{numbers[j]}")
        i = j + 1
    return ",".join(out)


def _by_stage(events: list[dict], tail: list[dict], pp: int) -> list[list[dict]]:
    """Per stage, what occupies it, by start: compute and the tail. ``dp_hidden`` runs under
    the backward, not instead of it (as the page's lookup.eventsByStage)."""
    out: list[list[dict]] = [[] for _ in range(pp)]
    for e in [*events, *tail]:
        if e["kind"] != "dp_hidden":
            out[e["stage"]].append(e)
    for stage in out:
        stage.sort(key=lambda e: e["start"])
    return out


def _run_clause(e: dict, stage_ranks: list[int], chunks: int) -> list:
    label = action_label(e["kind"], e["microbatch"], e["chunk"], chunks)
    if len(stage_ranks) <= MAX_LISTED_GPUS:
        return ["run", label, e["stage"], ",".join(map(str, stage_ranks))]
    return ["run_n", label, e["stage"], len(stage_ranks)]


def _send_clause(s: dict, chunks: int) -> list:
    label = action_label(s["kind"], s["microbatch"], s["src_chunk"], chunks)
    return ["send_f" if s["kind"] == "F" else "send_b", label, s["src_stage"], s["dst_stage"]]


def _under_way(s: dict, t: float) -> bool:
    """A hand-off in this frame: sent and not yet received, or sent and received at once."""
    return s["send"] <= t and (t < s["recv"] or s["send"] == s["recv"] == t)


class _Clauses:
    """Distinct clauses once, frames as indices into them: an action's clause repeats in
    every frame it spans, so interning keeps captions near the size of the events."""

    def __init__(self) -> None:
        self.table: list[list] = []
        self.index: dict[tuple, int] = {}
        self.by_id: dict[int, int] = {}  # an event's or send's clause, made once

    def of(self, clause: list) -> int:
        key = tuple(clause)
        if key not in self.index:
            self.index[key] = len(self.table)
            self.table.append(clause)
        return self.index[key]

    def once(self, obj: dict, make: Callable[[], list]) -> int:
        found = self.by_id.get(id(obj))  # obj outlives the call: its id stays its own
        if found is None:
            found = self.by_id[id(obj)] = self.of(make())
        return found


def caption(
    running: list[dict | None], live: list[dict], ranks: list[list[int]], chunks: int,
    clauses: _Clauses, comm: dict | None = None,
) -> list[int]:  # fmt: skip
    """One frame's clauses (as indices into ``clauses``), from what each stage runs and the
    hand-offs under way."""
    compute = [e for e in running if e is not None and e["kind"] in ("F", "B", "W")]
    out = [
        clauses.once(e, lambda e=e: _run_clause(e, ranks[e["stage"]], chunks))
        for e in compute[:MAX_RUN_CLAUSES]
    ]
    if len(compute) > MAX_RUN_CLAUSES:
        out.append(clauses.of(["more", len(compute) - MAX_RUN_CLAUSES]))
    if comm is not None:
        out += _comm_clauses(compute, comm, clauses)
    out += [clauses.once(x, lambda x=x: _send_clause(x, chunks)) for x in live[:MAX_SEND_CLAUSES]]
    if len(live) > MAX_SEND_CLAUSES:
        out.append(clauses.of(["more_sends", len(live) - MAX_SEND_CLAUSES]))
    if len(compute) < len(running):  # some stage is in the tail or idle
        out += _tail_and_idle(running, clauses, bool(out))
    return out or [clauses.of(["done"])]


def _comm_clauses(compute: list[dict], comm: dict, clauses: _Clauses) -> list[int]:
    """The stages in an F or B pass K/V blocks round their CP rings (cp - 1 steps per layer)
    and, on a mixture of experts, dispatch and combine over their EP groups."""
    busy = sorted({e["stage"] for e in compute if e["kind"] in ("F", "B")})
    if not busy:
        return []
    stages, one = span_list(busy), "_one" if len(busy) == 1 else ""
    out = []
    if comm.get("cp"):
        cp = comm["cp"]
        out.append(clauses.of(["cp_ring" + one, stages, cp["steps"], cp["size"]]))
    if comm.get("ep"):
        out.append(clauses.of(["ep_a2a" + one, stages, comm["ep"]["size"]]))
    return out


def _tail_and_idle(running: list[dict | None], clauses: _Clauses, busy: bool) -> list[int]:
    out = []
    for kind, key in TAIL_CLAUSE.items():
        stages = [e["stage"] for e in running if e is not None and e["kind"] == kind]
        if stages:
            out.append(clauses.of([key + ("_one" if len(stages) == 1 else ""), span_list(stages)]))
    idle = [stage for stage, e in enumerate(running) if e is None]
    if idle and (busy or out):  # all idle and nothing sent: the step is over
        out.append(clauses.of(["idle_one" if len(idle) == 1 else "idle_many", span_list(idle)]))
    return out


def _running(stages: list[list[dict]], at: list[int], t: float) -> list[dict | None]:
    """What each stage runs at t; ``at`` (per stage, the first event not ended) moves on."""
    out: list[dict | None] = []
    for stage, lst in enumerate(stages):
        i = at[stage]
        while i < len(lst) and lst[i]["end"] <= t:
            i += 1
        at[stage] = i
        out.append(lst[i] if i < len(lst) and lst[i]["start"] <= t else None)
    return out


def captions(
    view: dict[str, Any], sends: list[dict], times: list[float], comm: dict | None = None
) -> dict | None:
    """``{"clauses": [[key, arg, ...], ...], "frames": [[clause index, ...] per frame]}``
    (see ``caption``), or None past ``CAPTION_BUDGET``. ``comm``: the flow's CP ring and EP
    all-to-alls (flow_comm), worded for the stages in an F or B."""
    s, tl, lay = view["scenario"], view["timeline"], view["layout"]
    pp = lay["sizes"]["pp"]
    if len(times) * pp > CAPTION_BUDGET:
        return None
    chunks = chunks_per_rank(ScheduleName(s["schedule"]), s["virtual_stages"])
    ranks: list[list[int]] = [[] for _ in range(pp)]
    for r in lay["ranks"]:
        ranks[r["pp"]].append(r["rank"])
    stages = _by_stage(tl["events"], tl.get("tail") or [], pp)
    clauses, at, sent, live, frames = _Clauses(), [0] * pp, 0, [], []
    for t in times:  # times ascend, so every pointer only moves forward
        running = _running(stages, at, t)
        while sent < len(sends) and sends[sent]["send"] <= t:  # sends come ordered by send
            live.append(sends[sent])
            sent += 1
        live = [x for x in live if _under_way(x, t)]
        frames.append(caption(running, live, ranks, chunks, clauses, comm))
    return {"clauses": clauses.table, "frames": frames}
