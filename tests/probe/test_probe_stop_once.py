"""A rank reports its unsent records once when it stops (gpu_probe/train.py): on SIGTERM the
signal's thread and the training thread, whose blocked receive fails as its peers die of the
same signal, both said it (tests/reliability/test_sigterm_probe.py counted three lines for
two ranks in CI)."""

import threading
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from gpu_probe.train import Trainer  # noqa: E402


class Reporter:
    def __init__(self) -> None:
        self.stops = 0

    def stop(self, timeout_s: float) -> None:
        self.stops += 1

    def unsent(self) -> int:
        return 0


def test_the_first_stop_is_the_one_said(capsys):
    trainer = object.__new__(Trainer)  # no process group: only the stop path is exercised
    trainer.cfg = SimpleNamespace(server="ws://x", report_flush_timeout_s=1.0)
    trainer.reporter = Reporter()
    trainer._stopping = threading.Lock()
    trainer._upload_hint = lambda n: ""
    trainer.stop_reporting("stopped by SIGTERM")
    trainer.stop_reporting("rank 0 failed")
    out = capsys.readouterr().out
    assert out.count("record(s) of this rank unsent") == 1 and "stopped by SIGTERM" in out
    assert trainer.reporter.stops == 1
