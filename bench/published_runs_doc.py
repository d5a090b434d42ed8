"""docs/published_runs.md's tables, from app/core/fidelity/published_runs.json as the app loads
it (run_loader checks every row first), so the document lists exactly the rows the accuracy
board predicts, with each row's citation, caveat and note.

Only the text between ``<!-- generated -->`` and ``<!-- /generated -->`` is replaced; the
hand-written account of how the sources were read and how each figure converts stays.

    python bench/published_runs_doc.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.fidelity.published_runs import RUNS, PublishedRun  # noqa: E402

DOC = ROOT / "docs" / "published_runs.md"
START, END = "<!-- generated -->", "<!-- /generated -->"


def num(x: float | None) -> str:
    """A figure as the source printed it: 39.3e3 reads 39300, 143.8 stays 143.8."""
    if x is None:
        return ""
    return str(int(x)) if float(x).is_integer() else str(x)


def pct(x: float | None) -> str:
    return "" if x is None else f"{x:.1%}"


def yes(x: bool | None) -> str:
    return "" if x is None else "yes" if x else "no"


def table(head: list[str], rows: Iterable[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]


def grouped(key: Callable[[PublishedRun], str]) -> dict[str, list[int]]:
    """Row numbers (1-based, as in "All rows") by ``key``, in order of first appearance."""
    out: dict[str, list[int]] = {}
    for n, r in enumerate(RUNS, 1):
        out.setdefault(key(r), []).append(n)
    return out


def spans(numbers: list[int]) -> str:
    """1, 2, 3, 7 -> "1–3, 7": which rows, short enough for a table cell."""
    parts, start = [], numbers[0]
    for a, b in zip(numbers, [*numbers[1:], None], strict=True):
        if b != a + 1:
            parts.append(str(a) if a == start else f"{start}–{a}")
            start = b
    return ", ".join(parts)


def values(field: str) -> str:
    return ", ".join(str(v) for v in sorted({getattr(r, field) for r in RUNS}))


def overview() -> list[str]:
    by_url = grouped(lambda r: r.url)
    hardware = grouped(lambda r: r.hardware)
    per_hw = ", ".join(f"{hw} {len(ns)}" for hw, ns in hardware.items())
    sources = [
        [url, "; ".join(dict.fromkeys(RUNS[n - 1].source for n in ns)), len(ns), spans(ns),
         ", ".join(sorted({RUNS[n - 1].hardware for n in ns})),
         ", ".join(sorted({RUNS[n - 1].precision for n in ns}))]
        for url, ns in by_url.items()
    ]  # fmt: skip
    return [
        f"{len(RUNS)} runs from {len(by_url)} source pages. By hardware: {per_hw}. TP takes "
        f"the values {values('tp')}; PP {values('pp')}; DP {values('dp')}; CP {values('cp')}.",
        "",
        *table(["URL / id", "source", "rows", "row numbers", "hardware", "precision"], sources),
    ]


def recompute(r: PublishedRun) -> str:
    if r.recompute_layers is None:
        return r.recompute
    return f"{r.recompute}, {r.recompute_layers} of {r.arch.layers} layers"


def all_rows() -> list[str]:
    head = ["#", "id", "source", "model", "hardware", "GPUs", "TP", "PP", "DP", "CP", "v",
            "GBS", "MBS", "sched", "recompute", "SP", "ZeRO/FSDP", "prec", "iter s",
            "tok/s (all)", "tok/s/GPU", "TFLOP/s/GPU", "PFLOP/s (all)", "MFU", "HFU",
            "verified"]  # fmt: skip
    rows = [
        [n, f"`{r.id}`", r.source, r.arch.name, r.hardware, r.gpus, r.tp, r.pp, r.dp, r.cp,
         num(r.vpp), num(r.global_batch), num(r.micro_batch), r.schedule, recompute(r),
         yes(r.sequence_parallel), r.zero, r.precision, num(r.iteration_s),
         num(r.tokens_per_s), num(r.tokens_per_s_per_gpu), num(r.tflops_per_gpu),
         num(r.aggregate_pflops), pct(r.mfu), pct(r.hfu), yes(r.verified)]
        for n, r in enumerate(RUNS, 1)
    ]  # fmt: skip
    return table(head, rows)


def said(r: PublishedRun) -> str:
    """What a row's caveat and note say ("" for neither)."""
    parts = [f"*Caveat:* {r.caveat}" if r.caveat else "", f"*Note:* {r.note}" if r.note else ""]
    return " ".join(x for x in parts if x)


def shared(text: Callable[[PublishedRun], str], blank: str = "") -> list[str]:
    """One line per distinct text (caveat and note, FLOP formula, interconnect) with its rows,
    so a paragraph repeated across a source's rows is read once."""
    by_text = grouped(lambda r: text(r) or blank)
    return [
        f"- {'rows' if len(ns) > 1 else 'row'} {spans(ns)}: {t}" for t, ns in by_text.items() if t
    ]


def architectures() -> list[str]:
    archs = dict.fromkeys(r.arch for r in RUNS)  # distinct, in order of first use
    head = ["model", "layers", "hidden", "heads", "kv heads", "ffn", "vocab", "seq", "SwiGLU",
            "architecture source"]  # fmt: skip
    rows = [[a.name, a.layers, a.hidden, a.heads, a.kv_heads or a.heads, a.ffn_hidden, a.vocab,
             a.seq_len, yes(a.gated_mlp), a.arch_source] for a in archs]  # fmt: skip
    return table(head, rows)


def generated() -> str:
    parts = [
        *overview(), "",
        "## All rows", "", *all_rows(), "",
        "`v` = model chunks per pipeline rank (interleave depth); blank = none or not stated. "
        "A blank figure is one the source does not report.", "",
        "## Caveats and notes", "", "Rows with neither are left out of this list.", "",
        *shared(said), "",
        "## FLOP formulas", "", "How each source counts the FLOPs behind its TFLOP/s or MFU.",
        "", *shared(lambda r: r.flop_formula, "(none reported)"), "",
        "## Interconnects", "", *shared(lambda r: r.interconnect), "",
        "## Architectures", "", *architectures(),
    ]  # fmt: skip
    return "\n".join(parts)


def splice(doc: str, body: str) -> str:
    if START not in doc or END not in doc:
        raise SystemExit(f"{DOC}: the {START} … {END} markers are missing")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{body}\n{END}{tail}"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the document is stale")
    args = ap.parse_args()
    old = DOC.read_text(encoding="utf-8")
    new = splice(old, generated())
    if args.check:
        sys.exit(0 if new == old else f"{DOC} is stale: run python bench/published_runs_doc.py")
    DOC.write_text(new, encoding="utf-8")
    print(f"wrote {DOC}")
