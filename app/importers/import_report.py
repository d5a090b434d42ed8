"""An import's report, keyed, so /runs words it in the page's language as the CLI prints it.

Each line is a key of TEMPLATES and its params, already formatted (numbers to the digits the
CLI prints): the English text is the template filled, the CLI's output word for word, and
the upload's answer carries the keys and params beside it (``said``) for the page to fill
from the catalogue's ``live.import.<key>`` (tests/importers/test_import_report.py holds the
English catalogue to these templates and the other languages to their placeholders), as
app/core/traces/refusals.py does for refusals. A note a parser wrote stays a param, in its
own words.
"""

from __future__ import annotations

from dataclasses import dataclass

TEMPLATES = {
    "trace_head": "meshscope import-trace: run {run}: {files} rank file(s), {records} rank-step "
    "record(s); layout {layout}; ProfilerStep#{first} is step 0",
    "log_head": "meshscope import-trace: run {run}: {format} log(s) {logs}, {ranks} rank(s), "
    "{records} rank-step record(s); layout {layout}; {format} step {first} is step 0",
    "spans": "spans: {spans}",
    "phases": "phases: {phases}",
    "offsets": "clock offsets (ms, against rank {rank}): {offsets}",
    "residual": "residual {residual_ms} ms over {matched} collective(s); a step is {step_ms} ms",
    "unaligned": "not aligned (no shared collective): ranks {ranks}",
    "straggler_rank": "straggler: rank {rank}, {phase} +{excess_ms} ms a step ({ratio}x the "
    "median of its peers)",
    "straggler_link": "straggler: link of group {ranks}, {phase} +{excess_ms} ms a step "
    "({ratio}x the median of its peers)",
    "no_layout": "the log does not say the layout: every rank taken as a DP replica (give --dp "
    "--tp --pp --order)",
    "note": "note: {note}",
    "ranks_absent": "ranks absent from the log(s): {count}",
    "no_file": "no file for rank(s) {ranks} of the {world}: the run is stored as incomplete",
    "no_file_more": "no file for rank(s) {ranks} and {more} more of the {world}: the run is "
    "stored as incomplete",
    "priced": "priced a priori as the scenario link's model and hardware: {fields}",
    "priced_defaults": "priced a priori as the scenario link's model and hardware: its defaults",
    "stored": "{stored} new record(s) stored in {db}",
}


@dataclass(frozen=True)
class Report:
    """Lines of (key, params); the first is the head, the rest are indented under it.
    ``absent``: the ranks a trace import has no file for (``no_file``), which store
    the run as incomplete; a log that holds some ranks by design (DeepSpeed prints on rank
    0 alone) leaves it empty, and its run is done."""

    lines: tuple[tuple[str, dict[str, str]], ...] = ()
    absent: str = ""

    def __add__(self, other: Report) -> Report:
        return Report(self.lines + other.lines, self.absent or other.absent)

    def __str__(self) -> str:
        return "\n".join(
            ("  " if i else "") + TEMPLATES[key].format(**params)
            for i, (key, params) in enumerate(self.lines)
        )

    def said(self) -> list[dict[str, object]]:
        """The lines as the upload's answer carries them: key and params each."""
        return [{"key": key, "params": params} for key, params in self.lines]


def line(key: str, **params: object) -> Report:
    """A one-line report; params become text here, so every language shows the same figures."""
    TEMPLATES[key].format(**params)  # a missing or unknown placeholder fails here, not later
    return Report(((key, {k: str(v) for k, v in params.items()}),))


def no_file(missing: list[int], world: int, named: int = 8) -> Report:
    """The ranks without a file, the first ``named`` listed; the rest counted in a line of its
    own key, so a page says "and N more" in its language (a param cannot carry it worded)."""
    ranks, more = ", ".join(map(str, missing[:named])), len(missing) - named
    if more <= 0:
        return Report(line("no_file", ranks=ranks, world=world).lines, absent=ranks)
    said = line("no_file_more", ranks=ranks, more=more, world=world)
    return Report(said.lines, absent=f"{ranks} and {more} more")


def stragglers(found) -> Report:
    """find_stragglers' answer, a line each."""
    out = Report()
    for s in found:
        figures = dict(phase=s.phase, excess_ms=f"{s.excess_s * 1e3:.1f}", ratio=f"{s.ratio:.2f}")
        if s.cause == "rank":
            out += line("straggler_rank", rank=s.ranks[0], **figures)
        else:
            out += line("straggler_link", ranks=list(s.ranks), **figures)
    return out
