"""Per-run values for /metrics: the newest step's time and where it went, the model FLOP/s
each GPU achieved, and how many ranks are in each liveness state. Counts and shares only,
so a 16k-rank run costs a few series; the only per-rank values are the N slowest ranks.

MFU needs the device's peak FLOP/s: the probe records it (RunInfo.peak_tflops) for known GPUs
at bf16 or when given --peak-tflops; without it the run has FLOP/s per GPU but no MFU.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from app.core.cost import flops
from app.core.inputs.presets import ModelSpec
from app.core.inputs.protocol import RunInfo
from app.live.metrics_read import NewestStep

# Liveness's rank states (app/live/liveness.py), plus "unknown" for a rank of a run nobody
# watches any more that did not finish (as GET /api/runs/{run} reports it). Every state is
# exported, zeros included, so a dashboard's series do not come and go.
RANK_STATES = ("live", "stale", "missing", "dead", "ended", "done", "unknown")


@dataclass(frozen=True)
class RunValues:
    run: str
    status: str
    planned_steps: int
    newest: NewestStep | None  # None: announced, no record yet
    shares: dict[str, float]  # bubble, tp, dp, pp_wait: share of the newest step
    flops_per_gpu: float | None  # model FLOP/s per GPU over the newest step
    mfu: float | None  # that over the device's peak, when the probe recorded the peak
    ranks: dict[str, int]  # rank state -> how many ranks


def probe_model(info: RunInfo) -> ModelSpec:
    # gpu_probe/model.py: GPT blocks with a 4h MLP and learned positions, like Megatron's GPT.
    m = info.model
    return ModelSpec(info.run, m.layers, m.hidden, m.heads, m.seq_len, m.vocab, 4 * m.hidden)


def flops_per_gpu(info: RunInfo, step_time_s: float) -> float | None:
    """Model FLOPs of one iteration over (step time x GPUs): the MFU numerator."""
    if step_time_s <= 0:
        return None
    # Global batch = microbatch size x microbatches x DP replicas (app/core/views/prediction.py).
    batch = info.model.microbatch_size * info.microbatches * info.dp
    # Narayanan et al. 2021 eq. 3 without recompute (app.core.cost.flops.model_flops).
    return flops.model_flops(probe_model(info), batch) / (step_time_s * info.world_size)


def mfu(info: RunInfo, per_gpu: float | None) -> float | None:
    # Chowdhery et al. 2022 (PaLM) App. B: MFU = model FLOP/s over peak FLOP/s, per GPU.
    if per_gpu is None or info.peak_tflops is None:
        return None
    return per_gpu / (info.peak_tflops * 1e12)


def shares(n: NewestStep) -> dict[str, float]:
    """Each part's seconds summed over the step's ranks over their summed step times: the
    live page's "of the step" column (mean seconds / mean step time). The bubble is all but
    compute (app/core/fidelity/measured.py: T = compute + tp + dp + pp_wait + host)."""
    if n.rank_s <= 0:
        return dict.fromkeys(("bubble", "tp", "dp", "pp_wait"), 0.0)
    return {
        "bubble": (n.rank_s - n.compute_s) / n.rank_s,
        "tp": n.tp_s / n.rank_s,
        "dp": n.dp_s / n.rank_s,
        "pp_wait": n.pp_wait_s / n.rank_s,
    } | {axis: s / n.rank_s for axis, s in n.beyond.items()}  # cp, ep: runs with them


def rank_counts(
    watched: dict[int, str] | None, row: dict[str, Any], newest: NewestStep | None
) -> dict[str, int]:
    """Ranks per state. A watched run has liveness's states; past that, a done run's ranks
    are all done, and otherwise the ranks that stored the final step are done and the rest
    dead (failed run) or unknown, as GET /api/runs/{run} says."""
    if watched is not None:
        counted = Counter(watched.values())
    elif row["status"] == "done":
        counted = Counter(done=row["world"])
    else:
        final = newest is not None and newest.step >= row["steps"] - 1
        done = newest.ranks if final else 0
        rest = "dead" if row["status"] == "failed" else "unknown"
        counted = Counter({"done": done, rest: row["world"] - done})
    return {state: counted.get(state, 0) for state in RANK_STATES}


def run_values(
    row: dict[str, Any],
    newest: NewestStep | None,
    watched: dict[int, str] | None,
    info: RunInfo | None = None,  # row["info"] parsed, when the caller already has it
) -> RunValues:
    info = info or RunInfo.model_validate_json(row["info"])
    per_gpu = flops_per_gpu(info, newest.step_time_s) if newest else None
    return RunValues(
        run=row["run"],
        status=row["status"],
        planned_steps=row["steps"],
        newest=newest,
        shares=shares(newest) if newest else {},
        flops_per_gpu=per_gpu,
        mfu=mfu(info, per_gpu),
        ranks=rank_counts(watched, row, newest),
    )
