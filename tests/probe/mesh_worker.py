"""Run by test_probe_mesh in its own interpreter: for each shape, fork the ranks, build the
probe's DeviceMesh, and write down what every rank saw (coordinates, group members, and the
sum of an all-reduce over each group, which proves the groups really connect those ranks)."""

import json
import socket
import sys
from datetime import timedelta
from pathlib import Path

import torch.multiprocessing as mp


def rank_main(rank: int, world: int, port: int, shape: tuple, out: str) -> None:
    import torch
    import torch.distributed as dist

    from app.core.layout.topology import AXES, Layout
    from gpu_probe.mesh import MeshMismatchError, build_mesh, check_mesh

    torch.set_num_threads(1)
    dp, tp, pp, order = shape
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
        timeout=timedelta(seconds=30),
    )  # fmt: skip
    layout = Layout(dp, tp, pp, tuple(order.split("-")))
    ctx = build_mesh(layout, rank, torch.device("cpu"), node=0)
    seen = {"coord": {}, "groups": {}, "sums": {}}
    for axis in AXES:
        seen["coord"][axis] = ctx.mesh.get_local_rank(axis)
        seen["groups"][axis] = dist.get_process_group_ranks(ctx.mesh.get_group(axis))
        value = torch.tensor([float(rank)])
        if ctx.group(axis) is not None:
            dist.all_reduce(value, group=ctx.group(axis))
        seen["sums"][axis] = value.item()
    if len({dp, tp, pp}) == 3:  # every order differs here: a wrong one must be refused
        wrong = Layout(dp, tp, pp, tuple(reversed(layout.order)))
        try:
            check_mesh(ctx.mesh, wrong, rank)
            seen["mismatch"] = None
        except MeshMismatchError as err:
            seen["mismatch"] = str(err)
    name = f"{dp}x{tp}x{pp}-{order}-rank{rank}.json"
    Path(out, name).write_text(json.dumps(seen))
    dist.destroy_process_group()


def main(out: str, shapes: list) -> None:
    for dp, tp, pp, order in shapes:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        world = dp * tp * pp
        args = (world, port, (dp, tp, pp, order), out)
        mp.start_processes(rank_main, args=args, nprocs=world, start_method="fork")


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))
