"""gpu_probe benchmarks, printed side by side in one run (not tests):

1. timing overhead: step time with the timers on vs off, same ranks, interleaved steps
   (target <= 1.03x);
2. engine efficiency: our action-list engine vs torch.distributed.pipelining's
   Schedule1F1B / ScheduleInterleaved1F1B on the same chunks (target <= 1.1x);
3. measured vs predicted: mean measured F/B/W and p2p fed into app.core.simulate, predicted
   makespan and bubble next to the measured ones.

    python bench/bench_probe.py [--rounds N] [--only overhead|engine|predicted]

Ranks are forked from this process (imports only, no torch op before the fork). Each
step's time is the slowest rank's; ratios are of medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.schedules import build  # noqa: E402
from app.core.simulate import simulate  # noqa: E402
from gpu_probe.config import parse_args  # noqa: E402
from gpu_probe.data import shard_batch  # noqa: E402
from gpu_probe.launch import _free_port, _preload  # noqa: E402
from gpu_probe.mesh import build_mesh  # noqa: E402
from gpu_probe.model import lm_loss  # noqa: E402
from gpu_probe.train import Trainer  # noqa: E402
from gpu_probe.worker import run_info  # noqa: E402

TINY = ["--hidden", "64", "--heads", "4", "--vocab", "64", "--seq-len", "16", "--quiet"]


def _setup(rank: int, argv: list[str], port: int, out: str) -> Trainer:
    cfg = parse_args(argv + ["--run-name", "bench"])
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
        world_size=cfg.world_size, timeout=timedelta(seconds=120),
    )  # fmt: skip
    ctx = build_mesh(cfg.layout(cfg.world_size), rank, torch.device("cpu"), 0)
    return Trainer(cfg, ctx, run_info(cfg, "bench", cfg.world_size, "cpu"), Path(out))


def _slowest(seconds: float) -> float:
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def _timed(fn) -> float:
    dist.barrier()
    start = time.perf_counter()
    fn()
    return _slowest(time.perf_counter() - start)


def _overhead_rank(rank, argv, port, out, rounds):
    trainer = _setup(rank, argv, port, out)
    times, cpu, events = {True: [], False: []}, {True: [], False: []}, 0
    for step in range(2 * rounds + 2):
        timing = (step // 2 + step) % 2 == 0  # on, off, off, on, on, off, ...: ABBA
        trainer.set_timing(timing)
        cpu0 = time.process_time()
        t = _timed(lambda s=step: trainer.run_step(s, 0).model_dump_json())
        used = torch.tensor([time.process_time() - cpu0], dtype=torch.float64)
        dist.all_reduce(used)  # CPU seconds of all ranks: immune to who waited for whom
        if step >= 2:  # the first two pay lazy group set-up
            times[timing].append(t)
            cpu[timing].append(used.item())
        events = max(events, len(trainer.timer.spans))
    cost = _timer_cost(trainer, events) if rank == 0 else 0.0
    result = {"on": times[True], "off": times[False], "cost": cost, "events": events}
    _finish(rank, out, result | {"cpu_on": cpu[True], "cpu_off": cpu[False]})


def _timer_cost(trainer: Trainer, events: int, reps: int = 200) -> float:
    """Seconds per step spent in the timers themselves, measured alone (no contention from
    the step): ``events`` start/stop pairs, reading them, validating and serialising the
    record, minus the same record without events."""

    def one(enabled: bool) -> None:
        trainer.set_timing(enabled)
        trainer.timer.begin_step()
        for _ in range(events):
            trainer.timer.stop(trainer.timer.start("tp", 0, 0))
        trainer._record(0, 0, trainer.timer.finish(), 1.0).model_dump_json()

    per = {}
    for enabled in (True, False):
        start = time.perf_counter()
        for _ in range(reps):
            one(enabled)
        per[enabled] = (time.perf_counter() - start) / reps
    return per[True] - per[False]


def _engine_rank(rank, argv, port, out, rounds):
    from torch.distributed.pipelining import (
        PipelineStage,
        Schedule1F1B,
        ScheduleInterleaved1F1B,
    )

    trainer = _setup(rank, argv, port, out)
    cfg, ctx = trainer.cfg, trainer.ctx
    pp, nvs = ctx.size("pp"), ctx.size("pp") * cfg.chunks
    stages = [
        PipelineStage(chunk, chunk.vstage, nvs, ctx.device, group=dist.group.WORLD)
        for chunk in trainer.chunks
    ]

    def loss_fn(logits, targets):
        return lm_loss(logits, targets)

    m = cfg.microbatches
    if cfg.chunks == 1:
        schedule = Schedule1F1B(stages[0], m, loss_fn=loss_fn)
    else:
        schedule = ScheduleInterleaved1F1B(stages, m, loss_fn=loss_fn)

    def torch_step(step: int) -> None:
        batch = shard_batch(cfg.model, cfg.seed, step, 1, 0, m, ctx.device)
        for p in trainer.params.values():
            p.grad = None
        tokens, targets = torch.cat(batch.tokens), torch.cat(batch.targets)
        kwargs = {"target": targets, "losses": []} if ctx.coord.pp == pp - 1 else {}
        schedule.step(tokens, **kwargs) if ctx.coord.pp == 0 else schedule.step(**kwargs)
        trainer.optimizer.step()

    times = {"ours": [], "ours_untimed": [], "torch": []}
    runners = {
        "ours": lambda s: (trainer.set_timing(True), trainer.run_step(s, 0)),
        "ours_untimed": lambda s: (trainer.set_timing(False), trainer.run_step(s, 0)),
        "torch": torch_step,
    }
    for r in range(rounds + 1):
        order = list(runners) if r % 2 == 0 else list(reversed(runners))
        for name in order:
            t = _timed(lambda n=name, s=r: runners[n](s))
            if r > 0:
                times[name].append(t)
    _finish(rank, out, times)


def _predicted_rank(rank, argv, port, out, rounds):
    trainer = _setup(rank, argv, port, out)
    records = [trainer.run_step(step, 0).model_dump(mode="json") for step in range(rounds + 1)]
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, records[1:])  # drop the warm-up step
    _finish(rank, out, gathered)


def _finish(rank: int, out: str, payload) -> None:
    if rank == 0:
        Path(out, "result.json").write_text(json.dumps(payload))
    dist.barrier()
    dist.destroy_process_group()


def _launch(fn, argv: list[str], rounds: int):
    cfg = parse_args(argv)
    _preload(cfg)
    with tempfile.TemporaryDirectory() as out:
        args = (argv, _free_port(), out, rounds)
        mp.start_processes(fn, args=args, nprocs=cfg.world_size, start_method="fork")
        return json.loads(Path(out, "result.json").read_text())


def _ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(a) / statistics.median(b)


def bench_overhead(rounds: int) -> None:
    print("\n== timing overhead: timers on vs off (median step, slowest rank) ==")
    head = f"{'config':42} {'on ms':>8} {'off ms':>8} {'on/off':>7} {'cpu on/off':>10}"
    print(f"{head} {'timer ms/step':>13} {'cost/step':>9}  target <= 1.03")
    for label, argv in [
        ("dp1 tp1 pp2 1f1b m8 (2 ranks)", ["--pp", "2", "--microbatches", "8"]),
        ("dp2 tp2 pp2 1f1b m4 (8 ranks)", ["--dp", "2", "--tp", "2", "--pp", "2"]),
    ]:
        t = _launch(_overhead_rank, argv + TINY, rounds)
        on, off = statistics.median(t["on"]) * 1e3, statistics.median(t["off"]) * 1e3
        cpu = _ratio(t["cpu_on"], t["cpu_off"])
        cells = f"{on:8.1f} {off:8.1f} {_ratio(t['on'], t['off']):7.3f} {cpu:10.3f}"
        cost = f"{t['cost'] * 1e3:13.3f} {t['cost'] * 1e3 / off:9.2%}"
        print(f"{label:42} {cells} {cost}  ({t['events']} events)")
    print("(on/off: wall-clock A/B over interleaved steps, noisy here; cpu: CPU seconds of all")
    print(" ranks per step, A/B; cost: the timers, record and JSON alone, as a share of a step)")


def bench_engine(rounds: int) -> None:
    print("\n== engine: ours vs torch.distributed.pipelining (median step, slowest rank) ==")
    print(
        f"{'config':42} {'ours':>7} {'untimed':>8} {'torch':>7} {'ours/torch':>10}  target <= 1.1"
    )
    for label, argv in [
        ("pp4 1f1b m8 vs Schedule1F1B", ["--pp", "4", "--microbatches", "8"]),
        (
            "pp2 v2 interleaved m8 vs Interleaved1F1B",
            [
                "--pp",
                "2",
                "--schedule",
                "interleaved",
                "--virtual-stages",
                "2",
                "--microbatches",
                "8",
            ],
        ),
    ]:
        t = _launch(_engine_rank, argv + TINY, rounds)
        ms = {k: statistics.median(v) * 1e3 for k, v in t.items()}
        ratio = _ratio(t["ours"], t["torch"])
        cells = f"{ms['ours']:7.1f} {ms['ours_untimed']:8.1f} {ms['torch']:7.1f}"
        print(f"{label:42} {cells} {ratio:10.3f}")


def bench_predicted(rounds: int) -> None:
    from bench_probe_predicted import measured_durations, measured_timeline

    print("\n== measured vs predicted (app.core.simulate fed the measured means) ==")
    head = f"{'config':30} {'F ms':>6} {'B ms':>6} {'W ms':>6} {'p2p ms':>6}"
    print(f"{head} {'makespan meas/pred ms':>22} {'ratio':>6} {'bubble meas/pred':>17}")
    for label, name, pp, v, m in [
        ("pp2 1f1b m8 (2 ranks)", "1f1b", 2, 1, 8),
        ("pp4 1f1b m8 (4 ranks)", "1f1b", 4, 1, 8),
        ("pp4 zb-h1 m8 (4 ranks)", "zb-h1", 4, 1, 8),
        ("pp2 v2 interleaved m8", "interleaved", 2, 2, 8),
        ("pp2 zbv m8", "zbv", 2, 1, 8),
    ]:
        argv = ["--pp", str(pp), "--schedule", name, "--virtual-stages", str(v)]
        gathered = _launch(_predicted_rank, argv + ["--microbatches", str(m), *TINY], rounds)
        records = [rec for per_rank in gathered for rec in per_rank]
        durations = measured_durations(records, pp)
        predicted = simulate(name, build(name, pp, m, v), durations, v)
        makespan, bubble = measured_timeline(records, pp)
        d0 = durations[0]
        cells = f"{d0.f * 1e3:6.2f} {d0.b * 1e3:6.2f} {d0.w * 1e3:6.2f} {d0.p2p * 1e3:6.2f}"
        span = f"{makespan * 1e3:9.1f} / {predicted.makespan * 1e3:9.1f}"
        ratio = makespan / predicted.makespan
        bubbles = f"{bubble:7.3f} / {predicted.bubble_fraction:7.3f}"
        print(f"{label:30} {cells} {span:>22} {ratio:6.2f} {bubbles:>17}")
    print("(F/B/W shown for stage 0; the simulator gets each stage's own means)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--only", choices=["overhead", "engine", "predicted"], default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    sections = {"overhead": bench_overhead, "engine": bench_engine, "predicted": bench_predicted}
    for name, fn in sections.items():
        if args.only in (None, name):
            fn(args.rounds)


if __name__ == "__main__":
    main()
