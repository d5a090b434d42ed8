"""A run event's detail, keyed, so the run page words it in its own language.

The events table keeps one ``detail`` text a row. A detail this server writes is JSON of its
English text (what the JSON API's ``detail`` has always been) and its lines as catalogue keys
with params (``said``): an import's report (app/importers/import_report.py, the catalogue's
``live.import.*``) or liveness's reason (REASONS, ``live.reason.*``). The page's JSON gets
both, and ``text``: the lines filled from the request's catalogue. A detail an older server
stored is plain English, and shows as it is in every language, as does a line whose key the
catalogue lacks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from app.live.verdict import listed

# The English of each reason; the catalogue's live.reason.<key> (tests/live/test_event_text.py
# holds en.json to these). {ranks} is a list of ranks, worded as the verdict's (verdict.listed).
REASONS = {
    "dead": "rank(s) {ranks} stopped reporting",
    "stale": "rank(s) {ranks} silent or not progressing",
    "unsent": "rank(s) {ranks} ended with records unsent",
    "early": "rank(s) {ranks} stopped before the last step",
    "first_dead": "rank {rank} seen dead first",
}
# A long list of ranks' "and N more": the catalogue's, else its English.
MORE = ("live.verdict.more", "{list} and {n} more")
MAX_TEXT = 2000  # the English kept, as the plain detail was cut
MAX_STORED = 8000  # past this the keys are dropped: the row keeps its English alone
PLACEHOLDER = re.compile(r"\{(\w+)\}")

Said = list[dict[str, Any]]  # [{"key": catalogue key, "params": {name: str | list[int]}}]


def line(key: str, **params: Any) -> dict[str, Any]:
    return {"key": key, "params": params}


def reason(why: str, ranks: Iterable[int] = ()) -> Said:
    """Liveness's reason as a line of its own key (none for "" : running and done say none)."""
    return [line(f"live.reason.{why}", ranks=list(ranks))] if why else []


def english(said: Said) -> str:
    """The lines in REASONS' English, the text liveness has always stored."""
    en = {f"live.reason.{k}": v for k, v in REASONS.items()} | dict([MORE])
    return worded(said, en.get) or ""


def keyed(text: str, said: Sequence[Mapping[str, Any]]) -> str:
    """What the events table stores: the English alone when there are no keys."""
    text = text[:MAX_TEXT]
    if not said:
        return text
    stored = json.dumps({"text": text, "said": list(said)}, ensure_ascii=False)
    return stored if len(stored) <= MAX_STORED else text


def read(detail: str) -> tuple[str, Said]:
    """(English, lines) of a stored detail; an older plain one has no lines."""
    if not detail.startswith('{"text"'):
        return detail, []
    try:
        stored = json.loads(detail)
        return str(stored["text"]), list(stored["said"])
    except (ValueError, KeyError, TypeError):
        return detail, []


def worded(said: Said, t: Callable[[str], str | None]) -> str | None:
    """The lines filled from a catalogue (``t``: key -> text or None), the first unindented
    as an import's report prints; None when a key or placeholder is not there."""
    out = []
    for i, s in enumerate(said):
        template = t(s["key"])
        if not template:
            return None
        params = {k: _param(v, t) for k, v in s["params"].items()}
        if any(name not in params for name in PLACEHOLDER.findall(template)):
            return None
        out.append(("  " if i else "") + _fill(template, params))
    return "\n".join(out)


def _fill(template: str, params: Mapping[str, str]) -> str:
    """{name} by its param, as the page's JS fill() does (str.format would choke on a brace)."""
    return PLACEHOLDER.sub(lambda m: params[m[1]], template)


def _param(value: Any, t: Callable[[str], str | None]) -> str:
    """A list of ranks as the verdict lists them, with the catalogue's "and N more"."""
    if not isinstance(value, list):
        return str(value)
    return listed(value, t(MORE[0]) or MORE[1])


def for_page(events: list[dict[str, Any]], t: Callable[[str], str]) -> list[dict[str, Any]]:
    """The events as the run's JSON gives them: ``detail`` the English as ever, ``said`` the
    keyed lines (empty for a plain detail), ``text`` the detail in the catalogue's language."""
    table = lambda key: None if t(key) == key else t(key)  # noqa: E731 (t shows a gap as its key)
    out = []
    for e in events:
        text, said = read(e["detail"] or "")
        shown = worded(said, table) if said else None
        out.append(e | {"detail": text, "said": said, "text": text if shown is None else shown})
    return out
