"""The record frame of app.core.inputs.protocol, decoded by msgspec: the ingest hot path.

A 1,024-rank run sends one record frame per rank and step, and pydantic's strict
``parse_frame`` cost ~110 us of a 3.5 KB record; these Structs decode the same frame in
~20 us. They are the protocol's record, field for field: the same bounds, strictness (no
coercion: ``"3"``, ``true`` or ``3.0`` for an int is refused; an int is taken for a float),
extra fields refused, and the model validators ported to ``__post_init__``.

``parse_record_frame`` may only ever accept what ``protocol.parse_frame`` accepts, with the
same values: a frame it refuses (any error, a hello, a heartbeat) goes to ``parse_frame``,
so a bad frame is refused, and named, exactly as before. ``tests/live/test_fast_protocol.py``
holds the two decoders to that over valid, mutated and hostile frames.

Pure: msgspec only (a C extension without I/O).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from app.core.inputs import protocol
from app.core.inputs.protocol import (
    MAX_BATCH_RECORDS,
    MAX_DROPPED_EVENTS,
    MAX_EVENTS,
    MAX_FRAME_BYTES,
    MAX_MEM_BYTES,
    MAX_SECONDS,
    MAX_STEP,
    MAX_STOPPED_CHARS,
    MAX_WORLD,
    RUN_NAME_PATTERN,
)

# Python's ``$`` also matches before a final newline; pydantic's (Rust) regex does not.
_RUN = RUN_NAME_PATTERN.removesuffix("$") + r"\Z"
_FLOAT_MAX = 1.7976931348623157e308  # a JSON number past it decodes to inf: refused

RunName = Annotated[str, Meta(pattern=_RUN)]
Rank = Annotated[int, Meta(ge=0, lt=MAX_WORLD)]
Seconds = Annotated[float, Meta(ge=0.0, le=MAX_SECONDS)]
Mem = Annotated[int, Meta(ge=0, le=MAX_MEM_BYTES)]
Finite = Annotated[float, Meta(ge=-_FLOAT_MAX, le=_FLOAT_MAX)]  # allow_inf_nan=False
EventKind = Literal["F", "B", "W", "tp", "pp_send", "pp_recv", "dp", "optim", "cp", "ep"]

# Field order is the pydantic models' (so a stored record's JSON reads the same); kw_only
# lets a required field follow one with a default, as it does there.
_STRUCT = dict(frozen=True, forbid_unknown_fields=True, kw_only=True)
# Coord and ProbeEvent hold scalars only, so they can never be part of a reference cycle:
# untracked by the cycle collector (msgspec's gc=False, "Disabling Garbage Collection" in
# its performance docs), a 26-event record is 2 tracked objects instead of 29, and the
# server's collections, ~10% of its CPU at 1,024 ranks, come that much less often.
_SCALARS = dict(_STRUCT, gc=False)


class Coord(msgspec.Struct, omit_defaults=True, **_SCALARS):
    """protocol.Coord; cp and ep default to 0 and are left out at 0, as its serializer does."""

    dp: Rank
    pp: Rank
    tp: Rank
    cp: Rank = 0
    ep: Rank = 0


class ProbeEvent(msgspec.Struct, omit_defaults=True, **_SCALARS):
    """protocol.ProbeEvent; every default is None, so omit_defaults is exclude_none."""

    kind: EventKind
    microbatch: Annotated[int, Meta(ge=0, le=1_000_000)] | None = None
    chunk: Annotated[int, Meta(ge=0, le=1024)] | None = None
    start: Seconds
    end: Seconds
    peer: Rank | None = None
    cpu: Seconds | None = None

    # protocol.ProbeEvent._ordered (end >= start) is checked by ProbeRecord.__post_init__ in
    # one loop: a __post_init__ per event was ~6 us of a 26-event record's ~35 us decode.


class ProbeRecord(msgspec.Struct, **_STRUCT):
    """protocol.ProbeRecord (its docstring says what each field means)."""

    v: Literal[1] = 1
    run: RunName
    rank: Rank
    coord: Coord
    node: Rank
    step: Annotated[int, Meta(ge=0, le=MAX_STEP)]
    attempt: Annotated[int, Meta(ge=0, le=10_000)] = 0
    t0: Annotated[float, Meta(ge=0.0, le=1e11)]
    events: Annotated[list[ProbeEvent], Meta(max_length=MAX_EVENTS)]
    dropped_events: Annotated[int, Meta(ge=0, le=MAX_DROPPED_EVENTS)] = 0
    loss: Finite | None = None
    mem: Mem | None = None
    mem_allocated: Mem | None = None
    mem_reserved: Mem | None = None
    stopped: Annotated[str, Meta(min_length=1, max_length=MAX_STOPPED_CHARS)] | None = None

    def __post_init__(self) -> None:
        for e in self.events:
            if e.end < e.start:  # protocol.ProbeEvent._ordered
                raise ValueError(f"event ends before it starts: {e.end} < {e.start}")
        a, r = self.mem_allocated, self.mem_reserved
        if a is not None and r is not None and r < a:  # protocol.ProbeRecord's validator
            raise ValueError("mem_reserved is below mem_allocated")


class RecordFrame(msgspec.Struct, tag_field="type", tag="record", **_STRUCT):
    record: ProbeRecord


class RecordsFrame(msgspec.Struct, tag_field="type", tag="records", **_STRUCT):
    """protocol.RecordsFrame: several records of one connection in one frame."""

    records: Annotated[list[ProbeRecord], Meta(min_length=1, max_length=MAX_BATCH_RECORDS)]


class _Stored(msgspec.Struct, omit_defaults=True, frozen=True):
    """ProbeRecord's fields, in order, as ``model_dump_json(exclude_none=True)`` writes them:
    v, attempt and dropped_events have no default here, so they are always written; every
    other default is None, and a None is left out."""

    v: int
    run: str
    rank: int
    coord: Coord
    node: int
    step: int
    attempt: int
    t0: float
    events: list[ProbeEvent]
    dropped_events: int
    loss: float | None = None
    mem: int | None = None
    mem_allocated: int | None = None
    mem_reserved: int | None = None
    stopped: str | None = None


AnyRecord = ProbeRecord | protocol.ProbeRecord  # the latter: a frame only parse_frame took
_DECODER = msgspec.json.Decoder(RecordFrame | RecordsFrame)
_STORED = msgspec.json.Decoder(ProbeRecord)
_ENCODER = msgspec.json.Encoder()
assert _Stored.__struct_fields__ == ProbeRecord.__struct_fields__  # astuple's order


def parse_ingest_frame(text: str | bytes) -> RecordFrame | RecordsFrame:
    """A record or records frame; raises msgspec.MsgspecError (or ValueError) for anything
    else, which the caller then hands to protocol.parse_frame."""
    if len(text) > MAX_FRAME_BYTES:
        raise ValueError(f"frame of {len(text)} bytes exceeds {MAX_FRAME_BYTES}")
    return _DECODER.decode(text)


def parse_record_frame(text: str | bytes) -> ProbeRecord:
    """A record frame's record (a records frame is refused here, as anything else)."""
    frame = parse_ingest_frame(text)
    if not isinstance(frame, RecordFrame):
        raise ValueError("not a record frame")
    return frame.record


def record_json(rec: AnyRecord) -> str:
    """The record's canonical JSON: what protocol.ProbeRecord.model_dump_json(exclude_none=
    True) writes for the same record (the store keeps it and serves it parsed)."""
    if isinstance(rec, protocol.ProbeRecord):
        return rec.model_dump_json(exclude_none=True)
    return _ENCODER.encode(_Stored(*msgspec.structs.astuple(rec))).decode()


def with_events(rec: AnyRecord, events: list, dropped: int) -> AnyRecord:
    """The record with fewer events, the ones left out counted in ``dropped_events``."""
    if isinstance(rec, protocol.ProbeRecord):
        return rec.model_copy(update={"events": events, "dropped_events": dropped})
    return msgspec.structs.replace(rec, events=events, dropped_events=dropped)


def parse_stored_record(text: str | bytes) -> AnyRecord:
    """A stored record (its canonical JSON) read back, ~4x faster than pydantic, and with
    ~4x less memory held per event; whatever these Structs refuse, pydantic reads (or
    refuses) as before."""
    try:
        return _STORED.decode(text)
    except (msgspec.MsgspecError, ValueError):
        return protocol.ProbeRecord.model_validate_json(text)
