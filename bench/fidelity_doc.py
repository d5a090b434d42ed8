"""docs/fidelity.md's tables, from the app's own /api/fidelity: the app is built in-process
and asked, so the document shows exactly what the accuracy board (/fidelity) serves.

Only the text between ``<!-- generated -->`` and ``<!-- /generated -->`` is replaced; the
hand-written introduction and "Reading the errors" around it stay as they are.

    python bench/fidelity_doc.py [--check]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # httpx-in-starlette deprecation: not ours to fix
    from fastapi.testclient import TestClient

from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402

DOC = ROOT / "docs" / "fidelity.md"
START, END = "<!-- generated -->", "<!-- /generated -->"
GENERATIONS = {"ampere": "Ampere (A100)", "hopper": "Hopper (H100, H200, H800)", None: "none"}


def fetch() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Settings(db=Path(tmp) / "doc.sqlite3", ingest_token="t" * 32))
        # No `with`: the lifespan (live store, hub) is not needed to answer one GET.
        res = TestClient(app, base_url="http://localhost").get("/api/fidelity")  # a Host it allows
    res.raise_for_status()
    return res.json()


def pct(x: float | None, signed: bool = False) -> str:
    return "" if x is None else f"{x:+.1%}" if signed else f"{x:.1%}"


def table(head: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]


def summary_line(name: str, s: dict[str, Any]) -> list[Any]:
    return [name, s["rows"], pct(s["median_abs"]), pct(s["max_abs"]), s["within_10pct"]]


MODELS = (
    ("held_out", "this model, held out"),
    ("model", "this model, in-sample"),
    ("baseline", "flat 50% of peak"),
)


def held_out_name(src: dict[str, Any]) -> str:
    """ "held out at 0.78", "held out at 0.74 (fitted on every other source)"."""
    fits = src["held_out_fits"]
    at = ", ".join(str(f["ceiling"]) for f in fits)
    pooled = any(f["pool"] == "all" for f in fits)
    return f"this model, held out at {at}" + (" (fitted on every other source)" if pooled else "")


def summaries(board: dict[str, Any]) -> list[str]:
    """Overall, then per source family: held out, in-sample and the flat baseline."""
    head = ["model", "rows", "median abs error", "max abs error", "within 10%"]
    overall = [summary_line(name, board["summary"][key]) for key, name in MODELS]
    per_source = [
        [src["family"], *summary_line(held_out_name(src) if key == "held_out" else name, src[key])]
        for key, name in MODELS
        for src in board["sources"]
    ]
    return [*table(head, overall), "", *table(["source", *head], per_source)]


def kinds(board: dict[str, Any]) -> list[str]:
    rows = []
    for b in board["kinds"]:
        k = b["kind"]
        axes = " · ".join(a.upper() for a in ("tp", "pp", "dp") if k[a]) or "— (all 1)"
        sched = "— (PP 1)" if k["schedule"] == "none" else k["schedule"]
        rows.append([GENERATIONS.get(k["generation"], k["generation"]), sched, axes,
                     "yes" if k["zero3"] else "no", "yes" if k["sp"] else "no",
                     "yes" if k.get("fp8") else "no", "yes" if k.get("cp") else "no",
                     "yes" if k.get("moe") else "no", "yes" if b["validated"] else "no",
                     b["rows"], ", ".join(b["sources"]),
                     "± " + pct(b["median_abs"]), pct(b["max_abs"]),
                     pct(b["in_sample"]["median_abs"])])  # fmt: skip
    head = ["generation", "schedule", "axes > 1", "ZeRO-3 / FSDP", "SP", "FP8", "CP", "MoE",
            "validated",
            "held-out rows", "sources", "held-out median", "held-out max",
            "in-sample median"]  # fmt: skip
    return table(head, rows)


def secs(x: float | None) -> str:
    return "" if x is None else f"{x:.3g} s"


def held_out(r: dict[str, Any]) -> str:
    if r["held_out_error"] is None:
        return "—"
    return f"{pct(r['held_out_error'], True)} ({r['held_out_ceiling']})"


def predicted(board: dict[str, Any]) -> list[str]:
    rows = []
    for r in board["rows"]:
        if r["reason"]:
            continue
        sched = "—" if r["schedule"] == "none" else r["schedule"]
        sched += f" (v={r['vpp']})" if r["vpp"] else ""
        rows.append([r["source"], r["model"], r["hardware"], r["gpus"],
                     f"{r['tp']}/{r['pp']}/{r['dp']}", sched,
                     f"{r['micro_batch'] or '—'} × {r['global_batch']}", r["recompute"],
                     r["precision"], secs(r["published_s"]), secs(r["predicted_s"]),
                     pct(r["error"], True), held_out(r), secs(r["baseline_s"]),
                     pct(r["baseline_error"], True)])  # fmt: skip
    head = ["source", "model", "hardware", "GPUs", "TP/PP/DP", "schedule", "micro × global",
            "recompute", "precision", "published", "predicted", "error",
            "held-out error (ceiling)", "flat 50%", "flat error"]  # fmt: skip
    return table(head, rows)


def left_out(board: dict[str, Any]) -> list[str]:
    rows = [[r["source"], r["model"], r["hardware"], r["gpus"],
             f"{r['tp']}/{r['pp']}/{r['dp']}/{r['cp']}", r["precision"], r["reason"]]
            for r in board["rows"] if r["reason"]]  # fmt: skip
    return table(["source", "model", "hardware", "GPUs", "TP/PP/DP/CP", "precision", "reason"],
                 rows)  # fmt: skip


def generated(board: dict[str, Any]) -> str:
    n, runs, fit = board["predicted"], board["runs"], board["fit"]
    counts = ", ".join(f"{x['reason']} ({x['rows']})" for x in board["left_out"])
    parts = [
        f"{n} of {runs} runs predicted. Error = (predicted − published) / published. "
        f"In-sample: with the shipped constants, fitted on these rows. Held out: each row at "
        f"the GEMM ceiling picked ({fit['grid'][0]:.2f}–{fit['grid'][-1]:.2f}) without its "
        f"source, on its generation's other sources, or on every other source where its "
        f"generation has no other.", "",
        *summaries(board), "",
        "### Error bands by kind of configuration", "",
        f"What every page shows beside a predicted step time: the held-out errors of the rows "
        f"of the scenario's kind (generation, schedule, axes above 1, ZeRO-3, SP, FP8, CP) when "
        f"it has "
        f"at least {board['min_band_rows']} (validated); a scenario of any other kind says it "
        f"is not validated and shows the nearest validated kind's band. No band for a "
        f"forward-only schedule or a scenario that does not fit in memory.", "",
        *kinds(board), "",
        "### Predicted runs", "", *predicted(board), "",
        "### Left out", "", f"Kept in the data, predicted once the model grows the feature: "
        f"{counts}.", "", *left_out(board),
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
    old = DOC.read_text()
    new = splice(old, generated(fetch()))
    if args.check:
        sys.exit(0 if new == old else f"{DOC} is stale: run python bench/fidelity_doc.py")
    DOC.write_text(new)
    print(f"wrote {DOC}")
