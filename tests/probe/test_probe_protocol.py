"""The wire format refuses what a server must never store: NaN, unknown fields, inverted
intervals, unbounded event lists, other versions."""

import json

import pytest
from pydantic import ValidationError

from app.core.inputs.protocol import (
    MAX_EVENTS,
    AckFrame,
    ErrorFrame,
    ProbeEvent,
    ProbeRecord,
    RecordFrame,
    parse_frame,
)

pytestmark = pytest.mark.probe


def record(**changes) -> dict:
    base = {
        "v": 1, "run": "r1", "rank": 3, "coord": {"dp": 0, "pp": 1, "tp": 1}, "node": 0,
        "step": 7, "attempt": 0, "t0": 1.7e9, "loss": 2.5, "mem": 1024,
        "events": [{"kind": "F", "microbatch": 0, "chunk": 0, "start": 0.0, "end": 0.01}],
    }  # fmt: skip
    return base | changes


def test_a_valid_record_round_trips_through_a_frame():
    frame = parse_frame(json.dumps({"type": "record", "record": record()}))
    assert isinstance(frame, RecordFrame) and frame.record.step == 7
    assert parse_frame(frame.model_dump_json()) == frame


@pytest.mark.parametrize(
    "bad",
    [
        {"loss": float("nan")},
        {"t0": float("inf")},
        {"v": 2},
        {"run": "has space"},
        {"surprise": 1},
        {"rank": -1},
        {"events": [{"kind": "F", "start": 1.0, "end": 0.5}]},
        {"events": [{"kind": "idle", "start": 0.0, "end": 1.0}]},
        {"events": [{"kind": "tp", "start": 0.0, "end": 1.0}] * (MAX_EVENTS + 1)},
    ],
)
def test_records_that_must_never_be_stored_are_refused(bad):
    with pytest.raises(ValidationError):
        ProbeRecord.model_validate(record(**bad))


def test_nan_in_raw_json_is_refused():
    text = json.dumps({"type": "record", "record": record(loss=float("nan"))})
    assert "NaN" in text
    with pytest.raises(ValidationError):
        parse_frame(text)


def test_ack_cursor_orders_attempt_before_step():
    assert AckFrame(run="r", rank=0).cursor() == (0, -1)
    later_attempt = AckFrame(run="r", rank=0, attempt=1, step=2).cursor()
    assert later_attempt > AckFrame(run="r", rank=0, attempt=0, step=9).cursor()


def test_error_frames_are_typed():
    frame = parse_frame('{"type": "error", "code": "unauthorized", "message": "no", "fatal": true}')
    assert isinstance(frame, ErrorFrame) and frame.fatal
    with pytest.raises(ValidationError):
        parse_frame('{"type": "error", "code": "whatever", "message": "no"}')


def test_an_event_may_carry_a_peer_and_cpu_time():
    event = ProbeEvent(kind="pp_recv", microbatch=1, chunk=0, start=0.1, end=0.2, peer=5, cpu=0)
    assert event.peer == 5


def test_the_peak_for_mfu_comes_from_the_flag_or_a_known_gpus_name():
    from gpu_probe.device_peak import peak_tflops

    assert peak_tflops("cuda", "bf16", "NVIDIA H100 80GB HBM3", None) == 989.0
    assert peak_tflops("cuda", "bf16", "NVIDIA A100-SXM4-40GB", None) == 312.0
    assert peak_tflops("cuda", "fp32", "NVIDIA H100 80GB HBM3", None) is None  # bf16 peaks
    assert peak_tflops("cuda", "bf16", "NVIDIA GeForce RTX 3090", None) is None
    assert peak_tflops("cpu", "fp32", None, None) is None
    assert peak_tflops("cpu", "fp32", None, 0.2) == 0.2
