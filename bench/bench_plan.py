"""Planner speed: 1,024 GPUs x GPT-3 175B, printed beside the configurations searched.

python bench/bench_plan.py        Target: under 1 s (issue 9).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.evaluate.planner import plan  # noqa: E402

if __name__ == "__main__":
    for model, hw, gpus, batch in (("gpt3-175b", "a100-80g", 1024, 1536),
                                   ("llama3-70b", "h100-sxm", 256, 512)):  # fmt: skip
        t0 = time.perf_counter()
        result = plan(model, hw, gpus, batch)
        seconds = time.perf_counter() - t0
        best = result["results"][0] if result["results"] else None
        print(f"{model} on {gpus} x {hw}, batch {batch}: {seconds:.2f} s, searched "
              f"{result['searched']} configurations ({result['fitting']} fit)")  # fmt: skip
        if best:
            shape = f"dp{best['dp']} tp{best['tp']} pp{best['pp']} {best['schedule']}"
            knobs = f"v{best['virtual_stages']} mbs{best['micro_batch_size']} zero{best['zero']}"
            speed = f"{best['tokens_per_s']:.0f} tokens/s, MFU {best['mfu']:.1%}"
            print(f"  best: {shape} {knobs} {best['recompute']}: {speed}")
