"""DeepSpeed's timer lines (``"wall_clock_breakdown": true``) -> PhaseLog: the phase totals
of each optimizer step, for every rank that printed them.

The lines (deepspeedai/DeepSpeed at edaa7221, 2026-08-22):
  deepspeed/utils/timer.py ``SynchronizedWallClockTimer.log``: ``time (ms)``, then per timer
      `` | name: X.XX``, its milliseconds since it was last logged (logging resets it);
      printed by deepspeed/utils/logging.py ``print_dist`` as ``[Rank R] time (ms) | ...``,
      on rank 0 only (``ranks or [0]``), so a log holds rank 0's times unless every rank's
      output is kept and a rank's own lines are printed by the user's code.
  deepspeed/runtime/engine.py ``DeepSpeedEngine.step``: after each ``step()`` call the
      micro-step timers' line (fwd_microstep, bwd_microstep, bwd_inner_microstep,
      bwd_allreduce_microstep, step_microstep: one micro-batch), and at each gradient
      accumulation boundary the global timers' line (fwd, bwd, bwd_inner, bwd_allreduce,
      step): their totals over the boundary's micro-batches, one optimizer step.
  deepspeed/runtime/engine.py ``print_forward_breakdown`` (MoE models): before the global
      line, ``[Rank 0] time (ms) | fwd: X.XX (fwd_moe: ..., 1st_a2a: ..., 2nd_a2a: ...,
      top_k: ...)``, through the logger: parts of fwd, not stored.
  deepspeed/runtime/pipe/engine.py ``PipelineEngine``: the same two lines (the micro one
      with batch_input), then pipe_send_output, pipe_send_grad, pipe_recv_input and
      pipe_recv_grad, every ``steps_per_print`` steps, each the total since the last.
  deepspeed/runtime/config.py ``DeepSpeedConfig.print``: ``  name ..... value`` lines of
      the engine's configuration (steps_per_print, gradient_accumulation_steps, world_size).

A record is one global line, the rank's Nth its step N (the lines carry no step number and
no time stamp, so steps lie end to end). Stored: fwd as F, bwd_inner as B, bwd_allreduce
(the engine's gradient reduction after backward) as dp, step as the optimizer, the
pipeline's sends and receives as pp_send/pp_recv, laid end to end in ORDER like Megatron's
(megatron_log.py): totals, not the order of events. bwd (bwd_inner + bwd_allreduce) is a
total, never laid out; micro-step lines repeat the global ones per micro-batch and are
checked, not stored. What DeepSpeed does not time (data loading, the user's loop) is blank.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.core.traces.phases import Phase, PhaseLog, PhaseStep
from app.core.traces.spans import TraceError

# Timer -> probe kind, in the order laid out; the pipeline's four come once per step.
ORDER = (
    ("pipe_recv_input", "pp_recv"), ("fwd", "F"), ("pipe_send_output", "pp_send"),
    ("pipe_recv_grad", "pp_recv"), ("bwd_inner", "B"), ("pipe_send_grad", "pp_send"),
    ("bwd_allreduce", "dp"), ("step", "optim"),
)  # fmt: skip
GLOBAL = ("fwd", "bwd", "bwd_inner", "bwd_allreduce", "step")  # timer.py *_GLOBAL_TIMER
PIPE = ("pipe_send_output", "pipe_send_grad", "pipe_recv_input", "pipe_recv_grad")
TOTALS = ("bwd",)
LINE = re.compile(r"\[Rank (-?\d+)\] time \(ms\)(.*)$")
MOE = re.compile(r" \| fwd: \d+\.\d\d \(fwd_moe: ")  # engine.py print_forward_breakdown
SNIFF = re.compile(r"\[Rank -?\d+\] time \(ms\) \| \w")  # a file's head holds one
# timer.py prints each value with "{:.2f}": one without its two decimals is a cut line.
FIELDS = re.compile(r"(?: \| [\w.-]+: \d+\.\d\d)*\s*")
FIELD = re.compile(r" \| ([\w.-]+): (\d+\.\d\d)")
ARG = re.compile(r"\s(\w+) \.+ (\S.*?)\s*$")  # config.py: "  name ....... value"
HINT_ARGS = {"steps_per_print": "interval", "gradient_accumulation_steps": "ga",
             "world_size": "world"}  # fmt: skip


def _timers(text: str, name: str, n: int) -> tuple[int, dict[str, float]] | None:
    """(rank, {timer: seconds}) of a timer line, None for any other line; TraceError naming
    the file and line for one whose fields are not `` | name: ms``."""
    m = LINE.search(text)
    if not m:
        return None
    if MOE.match(m[2]):
        return int(m[1]), {}  # MoE's forward breakdown: within fwd, which its step line has
    if not FIELDS.fullmatch(m[2]):
        raise TraceError(f"{name}: line {n} is a DeepSpeed timer line whose fields are not "
                         f"' | name: ms' ({m[2].strip()[:80]!r}): a truncated or interleaved "
                         "line?")  # fmt: skip
    return int(m[1]), {t: float(ms) / 1e3 for t, ms in FIELD.findall(m[2])}


def _hint(hints: dict[str, int], text: str) -> None:
    if (m := ARG.search(text)) and m[1] in HINT_ARGS and m[2].isdigit():
        hints.setdefault(HINT_ARGS[m[1]], int(m[2]))  # the first print of it wins


def parse_lines(lines: Iterable[str], name: str) -> PhaseLog:
    """Each printing rank's optimizer steps; TraceError naming ``name`` for a malformed
    timer line, or a log with no global timer line (not written with wall_clock_breakdown)."""
    hints: dict[str, int] = {}
    steps: dict[int, list[dict[str, float]]] = {}  # rank -> its global lines' timers
    micro, pipe = 0, False
    for n, line in enumerate(lines, 1):
        found = _timers(line, name, n)
        if found is None:
            _hint(hints, line)
            continue
        rank, timers = found
        if any(t in timers for t in GLOBAL):
            steps.setdefault(rank, []).append(timers)
        elif any(t in timers for t in PIPE):
            pipe = True
            if steps.get(rank):  # after its step's line (pipe/engine.py train_batch)
                steps[rank][-1].update(timers)
        elif timers:
            micro += 1
    if not steps:
        raise TraceError(f"{name}: no DeepSpeed 'time (ms) | fwd: ...' line of the global "
                         "timers: not a DeepSpeed log with wall_clock_breakdown")  # fmt: skip
    notes = _notes(hints, pipe, steps, micro)
    found = tuple(_steps(steps, hints, pipe))
    return PhaseLog(name, "deepspeed", found, hints=_layout_hints(hints, pipe), notes=notes)


def _steps(steps: dict[int, list[dict[str, float]]], hints: dict[str, int], pipe: bool):
    # The pipeline engine logs every steps_per_print steps, totals since the last log.
    every = hints.get("interval", 1) if pipe else 1
    for rank, lines in sorted(steps.items()):
        start = 0.0  # no time stamp on the lines: steps end to end from 0
        for i, timers in enumerate(lines, 1):
            at, phases = 0.0, []
            for timer, kind in ORDER:
                if (took := timers.get(timer)) is not None:
                    phases.append(Phase(timer, kind, at, at + took))
                    at += took
            phases += [Phase(t, None, 0.0, timers[t]) for t in TOTALS if t in timers]
            yield PhaseStep(max(rank, 0), i * every, start, tuple(phases))
            start += at


def _layout_hints(hints: dict[str, int], pipe: bool) -> dict[str, int]:
    """DeepSpeed's world_size is the data-parallel size (config.py: the model-parallel
    unit's data-parallel world when there is one): the world only without a pipeline."""
    return {"world": hints["world"]} if "world" in hints and not pipe else {}


def _notes(hints: dict, pipe: bool, steps: dict, micro: int) -> tuple[str, ...]:
    out = ["DeepSpeed's timer lines carry no time stamp: each rank's steps lie end to end"]
    if pipe and hints.get("interval", 1) > 1:
        out.append(f"each record is the total of the {hints['interval']} steps ending at it "
                   "(steps_per_print)")  # fmt: skip
    if hints.get("ga", 1) > 1:
        out.append(
            f"each record holds the {hints['ga']} micro-batches of an optimizer step "
            f"(gradient_accumulation_steps; {micro} micro-step line(s) not stored)"
        )
    if -1 in steps:
        out.append("rank -1 (printed without torch.distributed) is stored as rank 0")
    return tuple(out)
