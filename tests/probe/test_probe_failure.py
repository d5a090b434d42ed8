"""A rank that dies makes every other rank fail fast, each naming itself, the step and the
operation it was in, instead of hanging."""

import re

import pytest
from probe_support import TINY, launch

pytestmark = [pytest.mark.probe, pytest.mark.timeout(120)]


def test_a_killed_rank_is_detected_and_named(tmp_path):
    args = [
        "--dp", "2", "--pp", "2", "--schedule", "1f1b", "--microbatches", "4", "--steps", "4",
        "--kill-at", "1:2", "--collective-timeout", "10", "--quiet", *TINY,
    ]  # fmt: skip
    run = launch(args, tmp_path, timeout_s=90)
    assert run.returncode == 1, run.output
    assert "rank 1 was killed by SIGKILL" in run.output
    pattern = r"rank (\d) \(dp\d pp\d tp\d, node 0\) failed at step (\d) during \S"
    named = dict(re.findall(pattern, run.output))
    assert set(named) == {"0", "2", "3"}, run.output
    assert named["0"] == "2", run.output  # rank 0 waits on rank 1 inside step 2
    # The other replica learns it in a DP all-reduce: step 2's, or step 1's when it lags.
    assert set(named.values()) <= {"1", "2"}, run.output
    # Start-up plus well under the 10 s collective timeout: no silent hang. The bound is
    # loose because this box is shared (2 cores, load averages of 5 seen).
    assert run.seconds < 75, run.output


def test_a_hung_rank_makes_the_others_time_out_with_a_named_error(tmp_path):
    args = [
        "--pp", "2", "--schedule", "1f1b", "--microbatches", "2", "--steps", "3",
        "--hang-at", "1:1", "--collective-timeout", "5", "--quiet", *TINY,
    ]  # fmt: skip
    run = launch(args, tmp_path, timeout_s=150)
    assert run.returncode == 1, run.output
    assert re.search(r"rank 0 \(dp0 pp0 tp0, node 0\) failed at step 1 during .*rank 1", run.output)
    assert "rank 1 was still running after the others failed: ended it" in run.output
    # Start-up + the 5 s timeout + the launcher's grace (timeout + 5 s), far from a hang.
    assert run.seconds < 100, run.output
