"""The launcher reads each failed rank's one-line reason; a rank ended while writing it (the
signal that stops a run reaches every rank) leaves an empty file, which must not crash the
launcher into exit 1 instead of 128 + signal (CI saw the IndexError)."""

from types import SimpleNamespace

from gpu_probe.launch import _read_errors


def test_an_empty_reason_file_falls_back_to_what_the_process_says(tmp_path):
    (tmp_path / "rank-00000.txt").write_text("")
    (tmp_path / "rank-00001.txt").write_text("rank 1 failed: a reason\nmore detail\n")
    procs = [SimpleNamespace(exitcode=-15), SimpleNamespace(exitcode=0)]
    assert _read_errors(tmp_path, procs, set()) == [
        "rank 0 was killed by SIGTERM",
        "rank 1 failed: a reason",
    ]
