"""A second `meshscope probe` into a spool that already holds the run (no --resume) is refused
once, before any rank starts: every rank said it and then the launcher said it again per
rank (4 lines for 2 ranks, 16 for 8)."""

from pathlib import Path

import pytest
from probe_support import TINY, launch

pytestmark = [pytest.mark.probe, pytest.mark.timeout(300)]
MESH = ["--dp", "2", "--tp", "1", "--pp", "1", "--steps", "1", "--quiet", "--run-name", "again"]


def test_a_taken_spool_is_refused_once_before_the_ranks_start(tmp_path: Path):
    out = tmp_path / "out"
    first = launch([*MESH, *TINY], out)
    assert first.returncode == 0, first.output
    second = launch([*MESH, *TINY], out)
    assert second.returncode == 2, second.output
    assert second.output.count("already holds run 'again'") == 1, second.output
    assert "pass --resume to continue it" in second.output
