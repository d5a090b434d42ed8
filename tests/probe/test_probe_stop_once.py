"""A rank reports its unsent records once when it stops (gpu_probe/train.py): on SIGTERM the
signal's thread and the training thread, whose blocked receive fails as its peers die of the
same signal, both said it (tests/reliability/test_sigterm_probe.py counted three lines for
two ranks in CI)."""

import threading
import time
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
    trainer._stopping, trainer._said = threading.Lock(), threading.Event()
    trainer._upload_hint = lambda n: ""
    trainer.stop_reporting("stopped by SIGTERM")
    trainer.stop_reporting("rank 0 failed")
    out = capsys.readouterr().out
    assert out.count("record(s) of this rank unsent") == 1 and "stopped by SIGTERM" in out
    assert trainer.reporter.stops == 1


class SlowReporter(Reporter):
    def stop(self, timeout_s: float) -> None:
        super().stop(timeout_s)
        time.sleep(0.3)  # a flush under way when the other thread arrives


def test_the_second_stop_waits_for_the_first_ones_line(capsys):
    # The training thread's failure stop was flushing when the signal's thread came; the
    # signal's thread returned at once and exited the process, so the line was never
    # printed (test_sigterm_probe counted one line for two ranks in CI).
    trainer = object.__new__(Trainer)
    trainer.cfg = SimpleNamespace(server="ws://x", report_flush_timeout_s=1.0)
    trainer.reporter = SlowReporter()
    trainer._stopping, trainer._said = threading.Lock(), threading.Event()
    trainer._upload_hint = lambda n: ""
    first = threading.Thread(target=trainer.stop_reporting, args=("rank 1 failed",))
    first.start()
    time.sleep(0.05)
    trainer.stop_reporting("stopped by SIGTERM")  # returns only once the line is out
    said = capsys.readouterr().out
    first.join()
    assert said.count("record(s) of this rank unsent") == 1 and "rank 1 failed" in said
    assert trainer.reporter.stops == 1
