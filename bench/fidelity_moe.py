"""Published mixture-of-experts runs against the cost model (issue 27's accuracy rows), apart
from the board: each row is a measured run on H100 from NVIDIA's Megatron-Bridge performance
summary (github.com/NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md, DGX-H100
tables of the 25.09, 25.11 and 26.02 containers), priced as the scenario its columns describe
with the shipped H100 constants; nothing is fitted to them. Not a test.

The page's MoE runs force-balance the tokens among experts (routing_imbalance 1) and report
Tokens / sec / GPU. Its 25.09 H100 rows are FP8 (the parenthesized TFLOP/s is the blockwise
recipe); 25.11 says FP8-CS, current scaling. A row whose EP spans TP ranks (MoE parallel
folding: EP x expert-TP over tp x dp) cannot be expressed here, where ep divides dp x cp, and
is listed as such.

    python bench/fidelity_moe.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.evaluate import evaluate  # noqa: E402
from app.core.inputs.scenario import Scenario, ScenarioError  # noqa: E402

SOURCE = "Megatron-Bridge performance-summary-archive.md, DGX-H100"
FP8_CS = {"fp8": "tensorwise", "fp8_scaling": "current"}
# (row, published tokens/s/GPU, scenario): GBS / (dp x MBS) micro-batches, Megatron's order.
ROWS = [
    ("25.09 DeepSeekV3 (dropless), 1024 GPUs", 1297, dict(
        model="deepseek-v3", tp=2, pp=8, dp=64, ep=64, virtual_stages=4, microbatches=128,
        micro_batch_size=1, **FP8_CS)),
    ("25.09 Qwen3_30B_a3B (tokendrop), 16 GPUs", 10494, dict(
        model="qwen3-30b-a3b", tp=1, pp=2, dp=8, ep=8, virtual_stages=24, microbatches=32,
        micro_batch_size=2, **FP8_CS)),
    ("25.11 Qwen3_30B_a3B (FP8-CS), 16 GPUs", 5275, dict(
        model="qwen3-30b-a3b", tp=1, pp=2, dp=8, ep=8, virtual_stages=24, microbatches=32,
        micro_batch_size=2, **FP8_CS)),
    ("26.02 Qwen3_30B_a3B (FP8), 16 GPUs", 5113, dict(
        model="qwen3-30b-a3b", tp=1, pp=2, dp=8, ep=8, virtual_stages=12, microbatches=128,
        micro_batch_size=1, **FP8_CS)),
    ("25.11 Qwen3_235B_a22B (FP8-CS), 256 GPUs", 1575, dict(
        model="qwen3-235b-a22b", tp=2, pp=8, dp=16, ep=32, virtual_stages=4, microbatches=128,
        micro_batch_size=1, **FP8_CS)),
]  # fmt: skip
COMMON = dict(order="megatron-5d", hardware="h100-sxm", schedule="interleaved",
              sequence_parallel=True, zero=1, overlap_grad_reduce=True)  # fmt: skip


def predicted(q: dict) -> float | str:
    """Tokens/s/GPU the cost model gives the row's scenario, or why it cannot be priced."""
    try:
        s = Scenario(**COMMON, **q)
        return evaluate(s, lean=True)["tokens_per_s"] / s.world_size
    except (ScenarioError, ValueError) as exc:
        return f"not expressible: {str(exc).splitlines()[0][:90]}"


def main() -> None:
    print(f"source: {SOURCE}\n")
    print("| run | published tok/s/GPU | predicted | error |")
    print("|---|---|---|---|")
    errors = []
    for name, published, q in ROWS:
        got = predicted(q)
        if isinstance(got, str):
            print(f"| {name} | {published} | {got} | |")
            continue
        errors.append(got / published - 1)
        print(f"| {name} | {published} | {got:.0f} | {errors[-1]:+.1%} |")
    if errors:
        abs_err = [abs(e) for e in errors]
        print(f"\n{len(errors)} rows priced: median |error| {statistics.median(abs_err):.1%}, "
              f"max {max(abs_err):.1%}")  # fmt: skip


if __name__ == "__main__":
    main()
