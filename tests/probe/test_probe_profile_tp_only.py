"""`meshscope probe --dp 1 --tp 2 --pp 2 --profile`, imported with no layout flags: the
stranger's first 4-rank try. The import said dp=2 tp=1 and stored every TP all-reduce as DP
(one family of groups is DP by spacing; the probe's ranges name it tp)."""

from pathlib import Path

import pytest
from probe_support import TINY, launch

from app.importers.import_trace import parse, prepare

pytestmark = [pytest.mark.probe, pytest.mark.timeout(300)]


def test_a_tp_only_profile_imports_as_tp(tmp_path: Path):
    traces = tmp_path / "traces"
    mesh = ["--dp", "1", "--tp", "2", "--pp", "2", "--microbatches", "2", "--quiet", *TINY]
    run = launch([*mesh, "--steps", "2", "--profile-steps", "1", "--profile", str(traces)],
                 tmp_path / "out", timeout_s=240)  # fmt: skip
    assert run.returncode == 0, run.output
    p = prepare(parse([str(traces), "--run", "tp-only"]))
    assert (p.layout.dp, p.layout.tp, p.layout.pp) == (1, 2, 2)
    kinds = {e["kind"] for r in p.records for e in r.model_dump()["events"]}
    assert "tp" in kinds and "dp" not in kinds
