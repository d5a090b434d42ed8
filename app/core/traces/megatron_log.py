"""Megatron-LM's training log (the last rank's stdout) -> PhaseLog: every rank's timer
values per logged iteration, from ``--timing-log-level 2 --timing-log-option all``.

The lines (NVIDIA/Megatron-LM at d98e8a64):
  megatron/training/arguments.py ``_print_args``: ``  name ....... value`` between
      ``--- arguments ---`` and ``--- end of arguments ---``: the layout and log_interval.
  megatron/training/training.py ``training_log``: `` [YYYY-mm-dd HH:MM:SS.ffffff] iteration
      N/ T | ... | elapsed time per iteration (ms): X | ...``, then ``timers.log(...,
      normalizer=log_interval)``.
  megatron/core/timers.py ``_get_all_ranks_time_string``: ``times across ranks (ms):``, then
      per timer ``  name:`` and per rank with a non-zero time ``     rank  R: X.XX``.

A block's values are each rank's mean over the ``log_interval`` iterations ending at its
iteration line (the normalizer), so a record is one iteration only when log_interval is 1.
The log gives each phase's total time in the iteration, not when it ran: stored phases are
laid end to end from the step's start in ORDER, so the breakdown, heatmap and stragglers
read true totals, while a timeline of such a run shows totals, not the order of events.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from app.core.traces.phases import Phase, PhaseLog, PhaseStep
from app.core.traces.spans import TraceError

# Timer -> probe kind, in the order laid out (training.py's timers_to_log, level 2). The
# combined send-and-receive calls block until their receive arrives (p2p_communication.py
# waits on every request of the batch): a pipeline wait. The embedding group's all-reduce
# (first and last stage) is no axis's; data loading has no kind: both are host time.
ORDER = (
    ("batch-generator", None), ("forward-recv", "pp_recv"), ("forward-compute", "F"),
    ("forward-send", "pp_send"), ("backward-recv", "pp_recv"), ("backward-compute", "B"),
    ("backward-send", "pp_send"), ("forward-send-forward-recv", "pp_recv"),
    ("forward-send-backward-recv", "pp_recv"), ("backward-send-forward-recv", "pp_recv"),
    ("backward-send-backward-recv", "pp_recv"),
    ("forward-backward-send-forward-backward-recv", "pp_recv"),
    ("layernorm-grads-all-reduce", "tp"), ("embedding-grads-all-reduce", None),
    ("all-grads-sync", "dp"), ("params-all-gather", "dp"), ("optimizer", "optim"),
)  # fmt: skip
# Totals of the phases above (forward-backward) and the optimizer's own parts: reported,
# never laid out, so nothing is counted twice.
TOTALS = ("forward-backward",)
ARG = re.compile(r"^\s+(\w+) \.+ (.*)$")
ITERATION = re.compile(r"iteration\s+(\d+)/\s*\d+ \|")
ELAPSED = re.compile(r"elapsed time per iteration \(ms\): ([\d.]+)")
STAMP = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\]")
TIMER = re.compile(r"^  (\S[^:]*):$")
RANK_TIME = re.compile(r"^\s+rank\s+(\d+): ([\d.]+)$")
HINT_ARGS = {"tensor_model_parallel_size": "tp", "pipeline_model_parallel_size": "pp",
             "context_parallel_size": "cp", "expert_model_parallel_size": "ep",
             "expert_tensor_parallel_size": "etp", "world_size": "world",
             "log_interval": "interval",
             "use_tp_pp_dp_mapping": "tp_pp_dp", "bf16": "bf16"}  # fmt: skip


class _State:
    def __init__(self, name: str, clock: Callable[[str], float] | None) -> None:
        self.name, self.clock = name, clock
        self.hints: dict[str, int] = {}
        self.in_args = False
        self.iteration: tuple[int, float, float | None] | None = None  # (n, elapsed s, stamp)
        self.block: dict[str, dict[int, float]] | None = None
        self.timer: str | None = None
        self.blocks: dict[int, tuple[float, float | None, dict]] = {}
        self.iterations = 0


def _hint(value: str) -> int | None:
    if value in ("True", "False"):
        return int(value == "True")
    return int(value) if value.isdigit() else None


def _line(s: _State, line: str, n: int) -> None:
    text = line.rstrip("\n")
    if s.block is not None:
        if m := TIMER.match(text):
            s.timer = m[1]
            s.block[s.timer] = {}
            return
        if (m := RANK_TIME.match(text)) and s.timer is not None:
            s.block[s.timer][int(m[1])] = float(m[2]) / 1e3
            return
        _close(s, n)
    if "-- arguments --" in text:
        s.in_args = True
    elif "-- end of arguments --" in text:
        s.in_args = False
    elif s.in_args and (m := ARG.match(text)) and m[1] in HINT_ARGS:
        if (v := _hint(m[2].strip())) is not None:
            s.hints[HINT_ARGS[m[1]]] = v
    elif (m := ITERATION.search(text)) and (e := ELAPSED.search(text)):
        stamp = STAMP.search(text)
        when = _clock_of(s, stamp[1]) if stamp else None
        s.iteration, s.iterations = (int(m[1]), float(e[1]) / 1e3, when), s.iterations + 1
    elif "time across ranks (ms):" in text and "times across" not in text:
        raise TraceError(f"{s.name}: line {n} has min/max times only: per-rank times need "
                         "--timing-log-option all")  # fmt: skip
    elif text.rstrip().endswith("times across ranks (ms):"):
        s.block, s.timer = {}, None


def _clock_of(s: _State, stamp: str) -> float | None:
    """Unix seconds of the line's ``YYYY-mm-dd HH:MM:SS.ffffff`` (the caller's clock reads
    it: app.core keeps off the system's calendar), or None without one."""
    return s.clock(stamp) if s.clock else None


def _close(s: _State, n: int) -> None:
    """A timer block ended: keep it for its iteration if it holds the step's timers."""
    block, s.block, s.timer = s.block, None, None
    if not block or not any(t in block for t, _ in ORDER) or s.iteration is None:
        return  # set-up, checkpoint or evaluation timers: not a training step's
    it, elapsed, when = s.iteration
    if it in s.blocks:
        raise TraceError(f"{s.name}: line {n}: iteration {it} is logged twice (a restart, or "
                         "two runs in one log)")  # fmt: skip
    s.blocks[it] = (elapsed, when, block)


def parse_lines(
    lines: Iterable[str], name: str, clock: Callable[[str], float] | None = None
) -> PhaseLog:
    """The log's per-rank phases per logged iteration; TraceError naming ``name`` when it
    holds no per-rank timer block, min/max only, or an iteration twice. ``clock`` turns an
    iteration line's time stamp into Unix seconds (without it, iterations lie end to end)."""
    s = _State(name, clock)
    n = 0
    for n, line in enumerate(lines, 1):
        _line(s, line, n)
    if s.block is not None:
        _close(s, n)
    if not s.blocks:
        why = "iteration lines but" if s.iterations else "no iteration lines and"
        raise TraceError(f"{name}: {why} no 'times across ranks (ms):' block after one: not a "
                         "Megatron log written with --timing-log-level 2 --timing-log-option "
                         "all")  # fmt: skip
    steps = [st for it, value in sorted(s.blocks.items()) for st in _ranks(it, *value, s)]
    interval = s.hints.get("interval", 1)
    notes = (f"each record is the mean of the {interval} iterations ending at it "
             "(log_interval)",) if interval > 1 else ()  # fmt: skip
    return PhaseLog(name, "megatron", tuple(steps), hints=s.hints, notes=notes)


def _ranks(it: int, elapsed: float, when: float | None, block: dict, s: _State):
    start = (when - elapsed) if when is not None else None
    if start is None:  # no time stamp on the line (older Megatron): iterations end to end
        start = sum(v[0] for k, v in s.blocks.items() if k < it)
    ranks = sorted({r for times in block.values() for r in times})
    for rank in ranks:
        at, phases = 0.0, []
        for timer, kind in ORDER:
            took = block.get(timer, {}).get(rank)
            if took is not None:
                phases.append(Phase(timer, kind, at, at + took))
                at += took
        for timer in TOTALS:
            if (took := block.get(timer, {}).get(rank)) is not None:
                phases.append(Phase(timer, None, 0.0, took))
        yield PhaseStep(rank, it, start, tuple(phases))
