"""Comparison of 2-4 scenarios, or a built-in preset, side by side (the /compare view).

A request is either an explicit list of scenarios (``s=<scenario query>``, 2 to 4 of them)
or a preset expanded from one base scenario:

- ``factory``: the source article's factory comparison for the base's GPU count, model and
  global batch: DP only (copy the line), TP only (split every job), PP only (split into
  workshops) and the base itself (the 3D mix).
- ``schedules``: the base under every pipeline schedule. This yields 7 scenarios, the one
  exception to the 2-4 cap.

With no parameters at all the view shows the factory comparison of ``TEACHING_BASE``.
Explicit scenarios that the core refuses are a 422 naming ``s``, the index and the field;
preset members the core refuses stay in the comparison, marked invalid with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode

from pydantic import ValidationError

from app.core.evaluate.one_scenario import Registry, evaluate
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.schedules import MULTI_CHUNK, ScheduleName
from app.core.support.echo import echo
from app.core.views import compare_view

PRESETS = ("factory", "schedules")
MIN_SCENARIOS, MAX_SCENARIOS = 2, 4
RESERVED = frozenset({"s", "preset"})
# 32 H100s (4 nodes) training Megatron's 22B model with 32 micro-batches per step: DP alone
# runs out of memory, TP alone crosses nodes and crawls, PP alone idles in its bubble.
TEACHING_BASE = MappingProxyType(
    {"model": "megatron-22b", "tp": "4", "pp": "4", "microbatches": "16"}
)

Loc = tuple[str | int, ...]


class Issue(NamedTuple):
    """One problem: where (loc starts with "query"), the English message, and the message's
    key and params (pydantic's error type and ctx, or a ScenarioError's key and params) so the
    web layer can word it in a page's language."""

    loc: Loc
    msg: str
    kind: str = "value_error"
    ctx: dict[str, Any] | None = None


def _issue(loc: Loc, key: str, template: str, /, **params: Any) -> Issue:
    return Issue(loc, template.format(**params), key, params or None)


class CompareError(ValueError):
    """Every problem in the request, each an Issue."""

    def __init__(self, issues: list[Issue]) -> None:
        super().__init__("; ".join(f"{'.'.join(map(str, i.loc))}: {i.msg}" for i in issues))
        self.issues = issues


@dataclass(frozen=True)
class Request:
    preset: str | None
    base: Scenario | None
    members: tuple[Scenario, ...]

    def urlquery(self) -> list[tuple[str, str]]:
        """The request as URL pairs: the shareable form of what is shown."""
        if self.preset is None:
            return [("s", urlencode(m.query())) for m in self.members]
        assert self.base is not None
        return [("preset", self.preset), *self.base.query().items()]


def _issues_of(exc: ValidationError, prefix: Loc) -> list[Issue]:
    out = []
    for e in exc.errors():
        kind = str(e.get("type", "value_error"))
        msg = "unknown parameter" if kind == "extra_forbidden" else str(e.get("msg"))
        loc = (*prefix, *(x for x in e.get("loc", ()) if x != "__root__"))
        out.append(Issue(loc, msg, kind, e.get("ctx")))
    return out


def _scenario(raw: dict[str, str], prefix: Loc, issues: list[Issue]) -> Scenario | None:
    try:
        return Scenario.model_validate(raw)
    except ValidationError as exc:
        issues.extend(_issues_of(exc, prefix))
        return None


def _pairs_to_dict(pairs: list[tuple[str, str]], prefix: Loc, issues: list) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in pairs:
        if k in out:
            issues.append(_issue((*prefix, k), "compare.repeated", "given more than once"))
        out[k] = v
    return out


def _explicit(values: list[str], issues: list[Issue]) -> tuple[Scenario, ...]:
    if not MIN_SCENARIOS <= len(values) <= MAX_SCENARIOS:
        issues.append(
            _issue(("query", "s"), "compare.count", "give {min} to {max} scenarios, got {n}",
                   min=MIN_SCENARIOS, max=MAX_SCENARIOS, n=len(values))
        )  # fmt: skip
        return ()
    members = []
    for i, text in enumerate(values):
        raw = _pairs_to_dict(parse_qsl(text, keep_blank_values=True), ("query", "s", i), issues)
        scenario = _scenario(raw, ("query", "s", i), issues)
        if scenario is not None:
            members.append(scenario)
    return tuple(members)


def _with(base: Scenario, **changes: Any) -> Scenario:
    return Scenario.model_validate({**base.model_dump(), **changes})


def expand_factory(base: Scenario) -> tuple[Scenario, ...]:
    """Same GPUs, model and global batch (micro-batches x DP): DP, TP, PP alone, then the base."""
    # Global batch = micro_batch_size x microbatches x dp (app/core/views/prediction.py, predict).
    world, total_m = base.world_size, base.microbatches * base.dp
    flat = {"schedule": ScheduleName.one_f_one_b, "virtual_stages": 1}  # one stage: no schedule
    # One axis alone: no CP or EP beside it (world = tp x cp x pp x dp counts cp, so keeping
    # the base's cp would multiply the GPUs; ep folds over dp x cp, which TP or PP alone lack).
    alone = {"cp": 1, "ep": 1}
    return (
        _with(base, dp=world, tp=1, pp=1, microbatches=max(1, total_m // world), **flat, **alone),
        _with(base, dp=1, tp=world, pp=1, microbatches=total_m, **flat, **alone),
        _with(base, dp=1, tp=1, pp=world, microbatches=total_m, **alone),
        base,
    )


def expand_schedules(base: Scenario) -> tuple[Scenario, ...]:
    """The base under each schedule; the interleaved ones (MULTI_CHUNK) keep v >= 2 chunks."""
    out = []
    for name in ScheduleName:
        v = max(2, base.virtual_stages) if name in MULTI_CHUNK else 1
        out.append(_with(base, schedule=name, virtual_stages=v))
    return tuple(out)


def parse(pairs: list[tuple[str, str]], view_keys: frozenset[str] = frozenset()) -> Request:
    """The request from URL pairs (view keys ignored). Raises CompareError naming each field."""
    issues: list[Issue] = []
    s_values = [v for k, v in pairs if k == "s"]
    presets = [v for k, v in pairs if k == "preset"]
    base_pairs = [(k, v) for k, v in pairs if k not in RESERVED and k not in view_keys]
    if s_values and (presets or base_pairs):
        loc = ("query", "preset") if presets else ("query", base_pairs[0][0])
        issues.append(_issue(loc, "compare.either", "use either s=<scenario> (2 to 4) or "
                             "preset=<name> with base parameters"))  # fmt: skip
        raise CompareError(issues)
    if s_values:
        members = _explicit(s_values, issues)
        if issues:
            raise CompareError(issues)
        return Request(None, None, members)
    if not presets and not base_pairs:
        presets, base_pairs = ["factory"], list(TEACHING_BASE.items())
    preset = presets[0] if presets else "factory"
    if len(presets) > 1:
        issues.append(_issue(("query", "preset"), "compare.repeated", "given more than once"))
    elif preset not in PRESETS:
        issues.append(_issue(("query", "preset"), "compare.preset_unknown",
                             "unknown preset {name}; one of: {known}",
                             name=echo(preset), known=", ".join(PRESETS)))  # fmt: skip
    base = _scenario(_pairs_to_dict(base_pairs, ("query",), issues), ("query",), issues)
    if issues or base is None:
        raise CompareError(issues)
    expand = expand_factory if preset == "factory" else expand_schedules
    return Request(preset, base, expand(base))


def member(i: int, s: Scenario, hardware: Registry = HARDWARE) -> dict[str, Any]:
    """One column: the scenario evaluated (lean: no formula cards or action lists, which the
    view never sends), or the core's refusal; without the verdicts, which need every column."""
    try:
        view: dict[str, Any] | ScenarioError = evaluate(s, hardware, lean=True)
    except ScenarioError as exc:
        view = exc
    return compare_view.member_json(i, s, view)


def head(req: Request) -> dict[str, Any]:
    """What the request says before any work: the preset, its base, the share link, bounds."""
    return {
        "preset": req.preset,
        "base": req.base.query() if req.base is not None else None,
        "urlquery": req.urlquery(),
        "count": len(req.members),
        "limits": {"min": MIN_SCENARIOS, "max": MAX_SCENARIOS},
    }


def conclude(req: Request, members: list[dict[str, Any]]) -> dict[str, Any]:
    """What needs every column: each column's verdicts, the winner, the shared time axis and
    the diff. Sets the verdicts on the columns too."""
    verdicts = compare_view.rank(members)
    return {
        "verdicts": verdicts,
        # The fastest training step that fits; a forward-only column is never it.
        "winner": compare_view.winner(members),
        "time_axis": compare_view.time_axis(members),
        "diff": compare_view.diff(list(req.members), members),
    }


def _refusals(members: list[dict[str, Any]]) -> list[Issue]:
    """The issues of the columns the core refused, each naming its scenario and field."""
    return [
        Issue(
            ("query", "s", m["index"], e["field"]),
            e["reason"],
            e["key"] or "value_error",
            e["params"],
        )  # fmt: skip
        for m in members
        if not m["valid"] and (e := m["error"])
    ]


def compare(req: Request, hardware: Registry = HARDWARE) -> dict[str, Any]:
    """Evaluate every member against the hardware registry; the side-by-side view model.
    Explicit members must all be valid."""
    members = [member(i, m, hardware) for i, m in enumerate(req.members)]
    if req.preset is None and (issues := _refusals(members)):
        raise CompareError(issues)
    tail = conclude(req, members)
    del tail["verdicts"]  # already on the columns
    return {**head(req), "members": members, **tail}


def stream(req: Request, hardware: Registry = HARDWARE) -> Iterator[tuple[str, Any]]:
    """The comparison piece by piece, for a page that draws each column as it comes:
    ("head", head), ("member", column) per member in order, then ("tail", conclude).

    Explicit members must all be valid, and a refusal must come before anything is sent, so
    they are all evaluated before the head; a preset's columns (whose refusals are kept)
    are evaluated one by one as they are sent."""
    if req.preset is None:
        result = compare(req, hardware)
        members = result["members"]
        yield "head", head(req)
        yield from (("member", m) for m in members)
    else:
        yield "head", head(req)
        members = []
        for i, s in enumerate(req.members):
            members.append(member(i, s, hardware))
            yield "member", members[-1]
    yield "tail", conclude(req, members)


def run(
    pairs: list[tuple[str, str]],
    view_keys: frozenset[str] = frozenset(),
    hardware: Registry = HARDWARE,
) -> dict[str, Any]:
    """parse + compare: URL pairs in, the comparison out (or CompareError)."""
    return compare(parse(pairs, view_keys), hardware)
