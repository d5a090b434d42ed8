"""Run by test_calibrate_in_flight in its own interpreter: two forked gloo ranks time a 4 KiB
exchange and an all-reduce after ``work`` as calibrate does, where rank 1's work takes
SKEW_S longer than rank 0's. Each rank writes the seconds it measured and its work times."""

import json
import socket
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch.multiprocessing as mp

SKEW_S = 0.02


def rank_main(rank: int, port: int, out: str) -> None:
    import torch
    import torch.distributed as dist

    from app.core.layout.topology import Layout
    from gpu_probe import calibrate_bench as bench
    from gpu_probe.collectives import link_op
    from gpu_probe.mesh import build_mesh

    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
        timeout=timedelta(seconds=30),
    )  # fmt: skip
    ctx = build_mesh(Layout(1, 2, 1, ("tp", "pp", "dp"), 2), rank, torch.device("cpu"), 0)

    def work() -> None:
        time.sleep(0.001 + (SKEW_S if rank == 1 else 0.0))

    b = bench.Budget(repeats=3, repeat_ms=1.0, gemm_max=16, max_bytes=4096)
    seen = {}
    for op in ("p2p", "all_reduce"):
        fn = link_op(ctx, "tp", op, 4096)
        seconds, blocks = bench._collective_s(fn, ctx, "tp", op, b, work)
        seen[op] = {"seconds": seconds, "blocks": blocks}
    Path(out, f"rank{rank}.json").write_text(json.dumps(seen))
    dist.destroy_process_group()


def main(out: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.start_processes(rank_main, args=(port, out), nprocs=2, start_method="fork")


if __name__ == "__main__":
    main(sys.argv[1])
