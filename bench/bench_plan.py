"""Planner speed: 1,024 GPUs x GPT-3 175B, printed beside the configurations searched.

python bench/bench_plan.py        Target: under 1 s on an idle machine (issue 9).

The planner simulates a shortlist of planner.SHORTLIST whatever ``top`` asks, so the time
does not depend on it. Wall and CPU seconds are both printed: on a shared machine the CPU
seconds say more. The other queries are the issue's reproductions ("Honest answers").
bench/bench_plan_axes.py --quick prints GPT-3 175B on 1,024 GPUs and DeepSeek-V3 on 2,048
(with fp8=search too) beside the planner before it searched HSDP and FP8, in one run.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.evaluate.planner import plan  # noqa: E402

QUERIES = (
    ("gpt3-175b", "a100-80g", 1024, 1536),
    ("llama3-70b", "h100-sxm", 256, 512),
    ("llama3-405b", "h100-sxm", 16384, 2048),
)

if __name__ == "__main__":
    for model, hw, gpus, batch in QUERIES:
        t0, c0 = time.perf_counter(), time.process_time()
        result = plan(model, hw, gpus, batch)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        best = result["results"][0] if result["results"] else None
        took = f"{seconds:.2f} s ({cpu:.2f} s CPU)"
        print(f"{model} on {gpus} x {hw}, batch {batch}: {took}, searched "
              f"{result['searched']} configurations ({result['fitting']} fit)")  # fmt: skip
        if best:
            shape = f"dp{best['dp']} tp{best['tp']} pp{best['pp']} {best['schedule']}"
            knobs = f"v{best['virtual_stages']} mbs{best['micro_batch_size']} zero{best['zero']}"
            sp = " SP" if best["sequence_parallel"] else ""
            speed = f"{best['tokens_per_s']:.0f} tokens/s, MFU {best['mfu']:.1%}"
            memory = f"{best['peak_bytes'] / 2**30:.1f} GiB{' (tight)' if best['tight'] else ''}"
            print(f"  best: {shape} {knobs} {best['recompute']}{sp}: {speed}, {memory}")
