"""docs/published_runs.md is generated from the data file: the check fails when it is stale."""

import subprocess
import sys
from pathlib import Path

from app.core.fidelity.published_runs import RUNS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "published_runs_doc.py"


def test_the_doc_matches_the_data_file():
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr


def test_the_doc_cites_every_row():
    doc = (ROOT / "docs" / "published_runs.md").read_text(encoding="utf-8")
    assert all(f"`{r.id}`" in doc and r.url in doc for r in RUNS)
