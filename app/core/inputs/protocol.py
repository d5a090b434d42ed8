"""Wire messages between gpu_probe ranks and the server, version 1. Pure: pydantic only.

A probe rank opens one websocket to ``/ws/ingest`` with ``Authorization: Bearer <token>`` and
speaks in JSON text frames, each an object with a ``type``:

    probe  -> server   hello      once per connection: who I am and what the run is
    server -> probe    ack        "I have stored (run, rank) up to this cursor"; sent in reply
                                  to hello (the resume point) and after records
    probe  -> server   record     one ProbeRecord: one rank, one training step
    probe  -> server   records    several ProbeRecords of the hello's rank in one frame (a
                                  spool replayed after an outage, an upload): each acked
                                  or refused as if sent alone; only to a server that
                                  offers it (``BATCH_HEADER`` on the handshake's answer)
    probe  -> server   heartbeat  "still alive", when nothing else was sent for a while
                                  (``hello.heartbeat_s``); ``ended``: "I stopped producing"
    server -> probe    error      something is wrong; ``fatal`` tells the probe to stop sending

Cursor order is ``(attempt, step)``. A relaunch with ``--resume`` re-runs the steps after
the last checkpoint under ``attempt + 1``, so a record replaces any stored record of the same
(run, rank, step) with a lower attempt, and the probe resends every spooled record after the
server's ack. Delivery is therefore at-least-once and idempotent per (run, rank, step).

The protocol is strict (pydantic strict mode): numbers are JSON numbers and booleans are
booleans, so ``"3"`` or ``true`` for a step is refused rather than coerced, and an integer
field never takes a float such as ``3.0``. Every integer is bounded, each at most what a
SQLite INTEGER (signed 64-bit) holds and most far tighter, so a valid frame is always a
storable one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    model_serializer,
    model_validator,
)

from app.core.inputs.scenario import MAX_SIMULATED_ACTIONS
from app.core.layout import mesh
from app.core.layout.topology import Layout
from app.core.schedules import SPLIT_BACKWARD, ScheduleName, chunks_per_rank

VERSION = 1
EVENT_KINDS: tuple[str, ...] = (
    "F", "B", "W", "tp", "pp_send", "pp_recv", "dp", "optim", "cp", "ep"
)  # fmt: skip
COMPUTE_KINDS: tuple[str, ...] = ("F", "B", "W")
MAX_WORLD = 65_536
MAX_EVENTS = 20_000  # per record; the probe drops (and counts) events past this
MAX_STEP = 10_000_000
MAX_SECONDS = 86_400.0  # an event lasting a day is a clock bug, not a measurement
MAX_FRAME_BYTES = 8 * 1024 * 1024  # MAX_EVENTS events of ~150 bytes, with room to spare
RUN_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
INT64_MAX = 2**63 - 1  # SQLite INTEGER is a signed 64-bit value (sqlite.org/datatype3.html)
MAX_MEM_BYTES = 2**50  # 1 PiB: no process's peak memory comes near it, far below INT64_MAX
MAX_DROPPED_EVENTS = 1_000_000_000  # a billion timed intervals in one step is a probe bug
MAX_STOPPED_CHARS = 2000  # a partial record's reason: the rank's error, cut to this
MAX_LINK_FIELDS = 64  # a scenario link's fields (the Scenario has fewer than this)
LinkKey = Annotated[str, Field(pattern=r"^[a-z_0-9]{1,32}$")]
LinkValue = Annotated[str, Field(max_length=512)]
# A records frame: at most this many records, and MAX_FRAME_BYTES in all like any frame. The
# server names its cap in this header of the websocket handshake's answer; an older server
# sends none, and a sender then sends one record per frame (an unknown frame type would be
# a strike there, never stored).
MAX_BATCH_RECORDS = 256
BATCH_HEADER = "x-meshscope-batch"
# A run's products are bounded in its hello (oversize; issue 26): each factor was in
# range, but a 65,536 x 65,536 world took the server to 24 GB.
MAX_RANK_STEPS = 100_000_000  # dp*tp*pp x steps: the store holds a row for each
# Events of one step over all ranks: what the run page draws of a step (app/live/analysis.py's
# MAX_DRAWN_EVENTS); the analysis parses a window of such steps (200k events measured 233 MB
# parsed), so a record of a world W carries at most this / W (RunInfo.events_cap).
MAX_STEP_EVENTS = 60_000


def _exact_one(value: Any) -> Any:
    # Literal[1] matches True and 1.0 even in strict mode (True == 1 == 1.0 in Python).
    if type(value) is not int:
        raise ValueError("the protocol version is the JSON integer 1")
    return value


RunName = Annotated[str, Field(pattern=RUN_NAME_PATTERN)]
Rank = Annotated[int, Field(ge=0, lt=MAX_WORLD)]
Step = Annotated[int, Field(ge=0, le=MAX_STEP)]
Attempt = Annotated[int, Field(ge=0, le=10_000)]
Seconds = Annotated[float, Field(ge=0.0, le=MAX_SECONDS)]
EventKind = Literal["F", "B", "W", "tp", "pp_send", "pp_recv", "dp", "optim", "cp", "ep"]
Version = Annotated[Literal[1], BeforeValidator(_exact_one)]


class _Strict(BaseModel):
    # allow_inf_nan=False: a NaN or inf anywhere is a validation error, never stored.
    # strict=True: no coercion ("3" -> 3, true -> 1, 3.0 -> 3); a float field takes an int.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


def _left_out(out: Any, **defaults: Any) -> Any:
    """A model's dumped fields without those at the given defaults: fields added after a
    release, absent from the JSON while unused, so older peers (extra="forbid") and stored
    rows read as before them."""
    if isinstance(out, dict):
        for name, default in defaults.items():
            if name in out and out[name] == default:
                del out[name]
    return out


class Coord(_Strict):
    dp: int = Field(ge=0, lt=MAX_WORLD)
    pp: int = Field(ge=0, lt=MAX_WORLD)
    tp: int = Field(ge=0, lt=MAX_WORLD)
    # The rank's place on the cp axis and in its expert-parallel group (layout.topology's
    # Coord); 0 is left out of the JSON, so a 3D run's records read as before cp and ep.
    cp: int = Field(default=0, ge=0, lt=MAX_WORLD)
    ep: int = Field(default=0, ge=0, lt=MAX_WORLD)

    @model_serializer(mode="wrap")
    def _zeros_left_out(self, handler: Any) -> Any:
        return _left_out(handler(self), cp=0, ep=0)


class ProbeEvent(_Strict):
    """One timed interval, in seconds from the rank's step start (``ProbeRecord.t0``).

    ``microbatch``/``chunk`` name the pipeline action the interval belongs to (None for the
    DP all-reduce and the optimizer). ``peer`` is the other rank of a pp_send/pp_recv.
    ``cpu`` is the CPU time the timing thread spent inside the interval (CPU runs only):
    much less than ``end - start`` means waiting or a core shared with other ranks.
    """

    kind: EventKind
    microbatch: int | None = Field(default=None, ge=0, le=1_000_000)
    chunk: int | None = Field(default=None, ge=0, le=1024)
    start: Seconds
    end: Seconds
    peer: Rank | None = None
    cpu: Seconds | None = None

    @model_validator(mode="after")
    def _ordered(self) -> ProbeEvent:
        if self.end < self.start:
            raise ValueError(f"event ends before it starts: {self.end} < {self.start}")
        return self


class ProbeRecord(_Strict):
    """What one rank did in one training step. ``t0`` is the wall clock (Unix seconds) at the
    rank's step start, so ranks of one step can be drawn on one axis; ``loss`` is the mean
    microbatch loss of this rank's DP shard (last pipeline stage only); ``mem`` is peak
    memory in bytes (CUDA: max allocated this step; CPU: the process's peak RSS since it
    started, host memory, not a device's).

    ``mem_allocated`` and ``mem_reserved`` are the GPU's peaks this step, as the cost model
    predicts them (app/core/cost/memory.py): torch.cuda.max_memory_allocated and
    max_memory_reserved, reset at the step's start. A CPU run has neither, so both are
    absent rather than 0 (0 would read as "measured: nothing"); older probes sent neither.
    The caching allocator's pool holds every allocated byte, so reserved >= allocated.

    ``stopped`` marks the record of a step the rank did not finish (a collective failed, the
    step raised): why it stopped, in the rank's own words. Such a record is partial: its
    events are those timed before the failure, the interrupted ones (the action it was in,
    and the collective or receive inside it) closed at the failure, so the event that ended
    last is what the rank was doing. The server keeps it apart from the finished steps."""

    v: Version = VERSION
    run: RunName
    rank: Rank
    coord: Coord
    node: int = Field(ge=0, lt=MAX_WORLD)
    step: Step
    attempt: Attempt = 0
    t0: float = Field(ge=0.0, le=1e11)
    events: list[ProbeEvent] = Field(max_length=MAX_EVENTS)
    dropped_events: int = Field(default=0, ge=0, le=MAX_DROPPED_EVENTS)
    loss: float | None = None
    mem: int | None = Field(default=None, ge=0, le=MAX_MEM_BYTES)
    mem_allocated: int | None = Field(default=None, ge=0, le=MAX_MEM_BYTES)
    mem_reserved: int | None = Field(default=None, ge=0, le=MAX_MEM_BYTES)
    stopped: str | None = Field(default=None, min_length=1, max_length=MAX_STOPPED_CHARS)

    @model_validator(mode="after")
    def _pool_holds_allocated(self) -> ProbeRecord:
        a, r = self.mem_allocated, self.mem_reserved
        if a is not None and r is not None and r < a:
            # No value echoed (app/errors.py's rule): the field names are the message.
            raise ValueError(
                "mem_reserved is below mem_allocated: the allocator's reserved pool holds"
                " every allocated byte, so its peak cannot be the smaller"
            )
        return self


class ModelShape(_Strict):
    hidden: int = Field(ge=1, le=65_536)
    heads: int = Field(ge=1, le=1024)
    layers: int = Field(ge=1, le=4096)
    vocab: int = Field(ge=2, le=1_048_576)
    seq_len: int = Field(ge=2, le=1_048_576)
    microbatch_size: int = Field(ge=1, le=65_536)


class RunInfo(_Strict):
    """The configuration every record of a run shares: enough to rebuild the core's layout
    and schedule and draw predicted next to measured."""

    v: Version = VERSION
    run: RunName
    dp: int = Field(ge=1, le=MAX_WORLD)
    tp: int = Field(ge=1, le=MAX_WORLD)
    pp: int = Field(ge=1, le=MAX_WORLD)
    # Fastest axis first; cp and ep may be named (Megatron's "tp-cp-ep-dp-pp") only in a run
    # where one of them is > 1, so a 3D run's order is one of the six it always was.
    order: str = Field(pattern=r"^(dp|pp|tp|cp|ep)(-(dp|pp|tp|cp|ep)){2,4}$")
    gpus_per_node: int = Field(ge=1, le=MAX_WORLD)
    # The one lax field: Python callers pass the name as a str; JSON carries a str anyway.
    schedule: Annotated[ScheduleName, Strict(False)]
    microbatches: int = Field(ge=1, le=1_000_000)
    virtual_stages: int = Field(ge=1, le=1024)
    steps: int = Field(ge=0, le=MAX_STEP)
    dtype: Literal["fp32", "bf16"]
    device: Literal["cpu", "cuda"]
    model: ModelShape
    # The device's peak dense TFLOP/s at this dtype (gpu_probe/device_peak.py): MFU's
    # denominator. None (a CPU, an unknown GPU, older senders): the server reports no MFU.
    peak_tflops: float | None = Field(default=None, gt=0.0, le=100_000.0)
    # An imported run laid out by a scenario link (app/importers/scenario_link.py): the link's
    # query, whose model and hardware the a-priori prediction prices (app/live/a_priori.py),
    # since a trace or a log does not say its model. None: the probe's own model above.
    scenario: dict[LinkKey, LinkValue] | None = Field(default=None, max_length=MAX_LINK_FIELDS)
    # Context and expert parallelism, folded as app.core.layout folds them (Megatron-LM's
    # parallel_state.py): cp is a factor of the world, ep re-partitions tp x cp x dp.
    cp: int = Field(default=1, ge=1, le=MAX_WORLD)
    ep: int = Field(default=1, ge=1, le=MAX_WORLD)

    @model_serializer(mode="wrap")
    def _link_only_when_given(self, handler: Any) -> Any:
        # Absent, not null, without a link: a server from before the field refuses any
        # field it does not know (extra="forbid"), and a probe's hello never carries one.
        # cp and ep likewise at 1: a 3D run's hello and stored info read as before them.
        return _left_out(handler(self), scenario=None, cp=1, ep=1)

    @model_validator(mode="after")
    def _order_folds(self) -> RunInfo:
        axes = tuple(self.order.split("-"))
        if not mesh.valid_axes(axes):  # app.core.layout's rule: dp, pp, tp once, cp/ep once
            raise ValueError("order names dp, pp and tp once each, cp and ep at most once")
        if self.cp == self.ep == 1 and len(axes) != 3:
            raise ValueError("order names cp or ep only in a run with cp or ep > 1")
        sizes = {"dp": self.dp, "tp": self.tp, "pp": self.pp, "cp": self.cp, "ep": self.ep}
        problem = mesh.fold_problem(axes, sizes)  # Megatron's rules on the expert grid
        if problem:
            raise ValueError(f"ep does not fold over tp x cp x dp under this order ({problem})")
        return self

    @property
    def world_size(self) -> int:
        return self.dp * self.tp * self.pp * self.cp  # ep adds no ranks (layout/mesh.py)

    @property
    def chunks(self) -> int:
        return chunks_per_rank(self.schedule, self.virtual_stages)

    def events_cap(self) -> int:
        """The most events one record of this run may carry (MAX_STEP_EVENTS over the
        world), so a step of every rank stays what the analysis can read."""
        return min(MAX_EVENTS, MAX_STEP_EVENTS // self.world_size)


def run_layout(info: RunInfo) -> Layout:
    """Where the run's ranks sit: the core's Layout of its sizes and order (raises ValueError
    as Layout does)."""
    order = tuple(info.order.split("-"))
    return Layout(info.dp, info.tp, info.pp, order, info.gpus_per_node, cp=info.cp, ep=info.ep)


def order_text(layout: Layout) -> str:
    """A layout's order as RunInfo.order spells it: cp and ep named only where one is > 1
    (``megatron-5d`` on a 3D run is ``tp-dp-pp``, the same rank order)."""
    wide = layout.cp > 1 or layout.ep > 1
    return "-".join(a for a in layout.order if wide or a not in ("cp", "ep"))


def oversize(info: RunInfo) -> str | None:
    """Why a run is too big to serve, naming the product of its fields and the bound, or None.
    Checked on every hello (a stored run from before the bounds still loads as a RunInfo)."""
    world, per_rank = info.world_size, info.microbatches * info.chunks
    compute = world * per_rank * (3 if info.schedule in SPLIT_BACKWARD else 2)
    w = "dp*tp*pp" if info.cp == 1 else "dp*tp*pp*cp"  # the world's factors (world_size)
    checks = (
        (f"{w} ranks", world, MAX_WORLD, "the most the core lays out and views serve"),
        ("pp*microbatches*chunks*3 actions", info.pp * per_rank * 3, MAX_SIMULATED_ACTIONS,
         "the most the core simulates, and so the run analysis replays"),
        (f"{w}*steps rank-steps", world * info.steps, MAX_RANK_STEPS,
         "the store keeps a row for each"),
        (f"{w}*microbatches*chunks F/B/W events per step", compute, MAX_STEP_EVENTS,
         "the most the run page draws of one step"),
    )  # fmt: skip
    for what, value, bound, why in checks:
        if value > bound:
            return f"info: {what} = {value} is over {bound}: {why}"
    return None


class HelloFrame(_Strict):
    type: Literal["hello"] = "hello"
    v: Version = VERSION
    rank: Rank
    attempt: Attempt = 0
    info: RunInfo
    # How often this sender heartbeats when it has nothing else to send. The server declares
    # a rank dead after a few missed beats; None (older senders, uploads): the 5 s default.
    heartbeat_s: float | None = Field(default=None, ge=0.05, le=60.0)

    @model_validator(mode="after")
    def _servable(self) -> HelloFrame:
        # Each factor was in range, but 65,536 x 65,536 ranks took the server to 24 GB.
        problem = oversize(self.info)
        if problem:
            raise ValueError(problem)  # names the product, echoes no other value
        return self


class RecordFrame(_Strict):
    type: Literal["record"] = "record"
    record: ProbeRecord


class RecordsFrame(_Strict):
    """Several records of the connection's (run, rank) in one frame: one frame's cost on the
    server for many records. Validated as a whole (a malformed record refuses the frame,
    naming ``records.<i>.<field>``); each valid record is then acked or refused alone."""

    type: Literal["records"] = "records"
    records: list[ProbeRecord] = Field(min_length=1, max_length=MAX_BATCH_RECORDS)


class AckFrame(_Strict):
    """Everything of (run, rank) up to and including (attempt, step) is stored.
    ``step=None`` (reply to hello only): nothing is stored yet."""

    type: Literal["ack"] = "ack"
    run: RunName
    rank: Rank
    attempt: Attempt = 0
    step: Step | None = None

    def cursor(self) -> tuple[int, int]:
        return (self.attempt, -1 if self.step is None else self.step)


class HeartbeatFrame(_Strict):
    type: Literal["heartbeat"] = "heartbeat"
    run: RunName
    rank: Rank
    step: Step | None = None  # last step this rank finished, None before the first
    sent_at: float = Field(ge=0.0, le=1e11)
    # True: the sender has stopped producing for this rank (the probe ended, or an upload
    # holds no more): ``step`` is the last step its spool has. A rank that ended is not dead
    # when it disconnects; records still missing then make the run "incomplete".
    ended: bool = False


class ErrorFrame(_Strict):
    type: Literal["error"] = "error"
    code: Literal["unauthorized", "bad_frame", "unsupported_version", "overloaded", "internal"]
    message: str = Field(max_length=2000)
    fatal: bool = False


AnyFrame = HelloFrame | RecordFrame | RecordsFrame | AckFrame | HeartbeatFrame | ErrorFrame
Frame = Annotated[AnyFrame, Field(discriminator="type")]
_FRAME = TypeAdapter(Frame)


def parse_frame(text: str | bytes) -> AnyFrame:
    """Validate one JSON frame; raises pydantic.ValidationError (or ValueError) when bad."""
    if len(text) > MAX_FRAME_BYTES:
        raise ValueError(f"frame of {len(text)} bytes exceeds {MAX_FRAME_BYTES}")
    return _FRAME.validate_json(text, strict=True)
