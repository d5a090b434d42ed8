"""The core pauses the cyclic collector around big builds and always leaves it as it was."""

import gc

import pytest

from app.core.schedules import build
from app.core.simulate import Durations, simulate
from app.core.support.gc_pause import gc_paused


@gc_paused
def _inner_state() -> bool:
    return gc.isenabled()


@gc_paused
def _nested() -> tuple[bool, bool]:
    return gc.isenabled(), _inner_state()


@gc_paused
def _fails() -> None:
    raise RuntimeError("boom")


def test_paused_inside_and_restored_after():
    assert gc.isenabled()
    assert _inner_state() is False
    assert _nested() == (False, False)
    assert gc.isenabled()


def test_restored_after_an_exception():
    with pytest.raises(RuntimeError):
        _fails()
    assert gc.isenabled()


def test_a_host_that_keeps_the_collector_off_is_left_alone():
    gc.disable()
    try:
        assert _inner_state() is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_build_and_simulate_leave_the_collector_on_and_give_the_same_timeline():
    actions = build("interleaved", 4, 8, 2)
    first = simulate("interleaved", actions, Durations(1, 2, 0, 0.1), 2)
    assert gc.isenabled()
    gc.disable()
    try:
        again = simulate("interleaved", build("interleaved", 4, 8, 2), Durations(1, 2, 0, 0.1), 2)
    finally:
        gc.enable()
    assert again == first and first.makespan > 0
