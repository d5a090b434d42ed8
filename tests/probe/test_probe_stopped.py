"""A step that fails leaves a partial record (ProbeRecord.stopped): what the rank timed
before the failure, the interrupted collective closed at the failure, so the event that ends
last is what it was blocked in. No ranks are launched: the timer and the trainer's method
run on their own (torch on CPU, no process group)."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from app.core.inputs.protocol import ProbeRecord  # noqa: E402
from app.core.layout.topology import Coord  # noqa: E402
from gpu_probe.errors import StepError  # noqa: E402
from gpu_probe.timing import CpuTimer  # noqa: E402
from gpu_probe.train import Trainer  # noqa: E402


def _blocked_timer() -> CpuTimer:
    """F of microbatch 0 whose TP all-reduce raised: F closed by its ``with`` block as the
    error went through it, the tp span left open (TPComm.all_reduce stops it only on
    success)."""
    timer = CpuTimer()
    timer.begin_step()
    timer.action = (0, 0)
    try:
        with timer.span("F", 0, 0):
            timer.start("tp")
            time.sleep(0.01)
            raise RuntimeError("Connection closed by peer")
    except RuntimeError:
        pass
    return timer


def test_interrupted_closes_the_open_collective_last():
    timer = _blocked_timer()
    assert timer.finish() == [e for e in timer.finish() if e["kind"] == "F"]  # tp is open
    events = timer.interrupted()
    assert [e["kind"] for e in events] == ["F", "tp"]
    f, tp = events
    assert tp["end"] >= f["end"] and (tp["microbatch"], tp["chunk"]) == (0, 0)


def test_the_trainer_spools_a_partial_record_of_the_failed_step():
    published = []
    trainer = SimpleNamespace(
        timer=_blocked_timer(),
        info=SimpleNamespace(run="stopped-run"),
        ctx=SimpleNamespace(
            rank=4, coord=Coord(dp=1, pp=0, tp=0), node=0, device=torch.device("cpu")
        ),  # fmt: skip
        reporter=SimpleNamespace(publish=lambda cursor, line: published.append((cursor, line))),
    )
    trainer._record = lambda *a, **k: Trainer._record(trainer, *a, **k)
    err = StepError("rank 4 failed at step 10 during pipeline action F microbatch 0", 4, 10)
    Trainer._report_stopped(trainer, 10, 0, err)
    ((cursor, line),) = published
    rec = ProbeRecord.model_validate(json.loads(line))
    assert cursor == (0, 10) and rec.step == 10 and rec.loss is None
    assert rec.stopped == str(err)
    last = max(rec.events, key=lambda e: (e.end, e.start))  # what the server reads
    assert (last.kind, last.microbatch) == ("tp", 0)
    assert [e.kind for e in rec.events] == ["F", "tp"]


def test_a_failure_to_record_never_hides_the_step_error(capsys):
    trainer = SimpleNamespace(timer=None)  # no timer: building the record itself fails
    Trainer._report_stopped(trainer, 3, 0, StepError("boom", 0, 3))
    assert "could not record the failed step 3" in capsys.readouterr().out
