"""One rank's training loop: pipeline step, DP gradient all-reduce, AdamW, record, checkpoint.

Gradient scale: each microbatch's loss is divided by m on the last stage and the DP
all-reduce divides the summed gradients by dp, so the update is the gradient of the mean
loss over the global batch of dp * m microbatches, the same as one process would compute.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import asdict
from pathlib import Path

import torch
import torch.distributed as dist

from app.core.inputs.protocol import (
    MAX_EVENTS,
    MAX_STOPPED_CHARS,
    HelloFrame,
    ProbeRecord,
    RunInfo,
)
from app.core.schedules import FORWARD_ONLY, TWO_COPIES, virtual_stage
from gpu_probe.checkpoint import Checkpointer, dump_params
from gpu_probe.config import ProbeConfig
from gpu_probe.copies import stage_of
from gpu_probe.data import shard_batch
from gpu_probe.engine import PipelineEngine
from gpu_probe.errors import CommError, StepError
from gpu_probe.mesh import MeshContext
from gpu_probe.model import GPTChunk, init_parameters
from gpu_probe.p2p import PipeChannel
from gpu_probe.peak_memory import memory_fields
from gpu_probe.peak_memory import reset as reset_peak_memory
from gpu_probe.profiling import StepProfiler
from gpu_probe.reporter import Reporter, Spool
from gpu_probe.tensor_parallel import TPComm
from gpu_probe.timing import make_timer


class Trainer:
    def __init__(self, cfg: ProbeConfig, ctx: MeshContext, info: RunInfo, out_dir: Path) -> None:
        self.cfg, self.ctx, self.info, self.out_dir = cfg, ctx, info, Path(out_dir)
        # One stop per rank: a signal's thread and the training thread, whose blocked receive
        # fails as the peers die of the same signal, both reported the rank's unsent records.
        self._stopping = threading.Lock()
        self._said = threading.Event()  # that one stop's line is printed
        self.forward_only = cfg.schedule in FORWARD_ONLY
        self.timer = make_timer(cfg.timing, ctx.device)
        self.chunks = self._build_chunks()
        self.params = {n: p for c in self.chunks for n, p in c.named_parameters()}
        self.optimizer = torch.optim.AdamW(
            list(self.params.values()), lr=cfg.lr, weight_decay=cfg.weight_decay
        )
        m, bf16 = cfg.model, cfg.dtype == "bf16"
        boundary = (m.microbatch_size, m.seq_len, m.hidden)
        dtype = torch.bfloat16 if bf16 else torch.float32
        self.channel = PipeChannel(ctx.rank, self.timer, boundary, dtype, ctx.device)
        self.engine = PipelineEngine(
            cfg.schedule, cfg.microbatches, cfg.virtual_stages, ctx, self.chunks,
            self.channel, self.timer, autocast_dtype=torch.bfloat16 if bf16 else None,
            slow_s=cfg.slow_ms / 1e3 if cfg.slow_rank == ctx.rank else 0.0,
        )  # fmt: skip
        self.checkpointer = self._checkpointer()
        self.phase = "setup"

    def set_timing(self, enabled: bool) -> None:
        """Swap the timer everywhere it is held (the overhead benchmark toggles it)."""
        self.timer = make_timer(enabled, self.ctx.device)
        self.engine.timer = self.channel.timer = self.tp_comm.timer = self.timer

    def train(self) -> None:
        start = self._restore()
        attempt, self.reporter = self._open_reporter(start)
        profiler = StepProfiler(self.cfg, self.ctx.rank, self.out_dir, self.cfg.steps - start)
        self.timer.ranges = profiler.on  # --profile: actions become record_function ranges
        try:
            with profiler:
                for step in range(start, self.cfg.steps):
                    self._inject_fault(step, attempt)
                    try:
                        record = self.run_step(step, attempt)
                    except StepError as err:
                        self._report_stopped(step, attempt, err)
                        raise
                    profiler.step()
                    self._publish(step, attempt, record)
        except BaseException:
            self.stop_reporting(f"{self.ctx.describe()} failed")  # flush what we can
            raise
        self.reporter.close(self.cfg.report_flush_timeout_s, finished=True)
        self._say_unsent(self.reporter.unsent(), len(self.reporter.spool.records()))
        if self.cfg.dump_params:
            dump_params(Path(self.cfg.dump_params), self.ctx, self.params, self.chunks)

    def _publish(self, step: int, attempt: int, record: ProbeRecord) -> None:
        self.reporter.publish((attempt, step), record.model_dump_json(exclude_none=True))
        if not self.cfg.quiet and self.ctx.rank == 0:
            print(f"[probe] step {step} done", flush=True)
        if self.checkpointer and self.checkpointer.due(step + 1):
            self._guard(step, "checkpoint save", self._save, step + 1)

    def stop_reporting(self, why: str, timeout_s: float = 3.0) -> None:
        """A failure or a signal: flush for a bounded time and say what stays unsent."""
        reporter = getattr(self, "reporter", None)
        if reporter is None or not self.cfg.server:
            return
        flush_s = min(timeout_s, self.cfg.report_flush_timeout_s)
        if not self._stopping.acquire(blocking=False):
            # The other thread is saying it. The signal's thread exits the process once this
            # returns, which cut the training thread's line off mid-flush (CI saw one line
            # for two ranks): it waits for that line first, bounded.
            self._said.wait(flush_s + 1.0)
            return
        try:
            reporter.stop(flush_s)
            n = reporter.unsent()
            print(f"[probe] {why}: {n} record(s) of this rank unsent" + self._upload_hint(n),
                  flush=True)  # fmt: skip
        finally:
            self._said.set()

    def _say_unsent(self, mine: int, spooled: int) -> None:
        """Rank 0 prints the run's total: how many records the server lacks, and the fix."""
        if not self.cfg.server:
            return
        counts = torch.tensor([mine, spooled], dtype=torch.int64, device=self.ctx.device)
        dist.all_reduce(counts)
        unsent, total = (int(x) for x in counts)
        if self.ctx.rank != 0:
            return
        if unsent == 0:
            print(f"[probe] all {total} records were sent to the server", flush=True)
        else:
            print(f"[probe] {unsent} of {total} records were not received by the server"
                  + self._upload_hint(unsent), flush=True)  # fmt: skip

    def _upload_hint(self, unsent: int) -> str:
        if unsent == 0:
            return ""
        nodes = self.ctx.layout.node(self.ctx.layout.world_size - 1) > 0
        where = " (on every node: each holds its own ranks' spools)" if nodes else ""
        return (f"; send them with: meshscope upload {self.out_dir} --server {self.cfg.server}"
                f"{where}")  # fmt: skip

    def _report_stopped(self, step: int, attempt: int, err: StepError) -> None:
        """Spool and send the failed step's partial record (``ProbeRecord.stopped``): what
        this rank timed before the failure, the interrupted collective or receive last, so
        the server can say what each rank was blocked in. Never masks the failure itself."""
        try:
            events = self.timer.interrupted()
            why = str(err)[:MAX_STOPPED_CHARS] or "stopped"
            record = self._record(step, attempt, events, None, stopped=why)
            self.reporter.publish((attempt, step), record.model_dump_json(exclude_none=True))
        except Exception as exc:  # noqa: BLE001 - the step's own error is the one to raise
            print(f"[probe] could not record the failed step {step}: {exc}", flush=True)

    def _inject_fault(self, step: int, attempt: int) -> None:
        """--kill-at / --hang-at, first attempt only: the failure and resume tests."""
        here = (self.ctx.rank, step)
        if attempt == 0 and self.cfg.kill_at == here:
            os.kill(os.getpid(), signal.SIGKILL)
        if attempt == 0 and self.cfg.hang_at == here:
            time.sleep(3600.0)

    def run_step(self, step: int, attempt: int) -> ProbeRecord:
        return self._guard(step, None, self._step, step, attempt)

    def _step(self, step: int, attempt: int) -> ProbeRecord:
        cfg, ctx = self.cfg, self.ctx
        reset_peak_memory(ctx.device)  # each record carries its own step's peaks
        batch = shard_batch(
            cfg.model, cfg.seed, step, ctx.size("dp"), ctx.coord.dp, cfg.microbatches, ctx.device
        )
        for p in self.params.values():
            p.grad = None
        self.timer.begin_step()  # the step starts with the pipeline, data already made
        self.phase = "pipeline"
        losses = self.engine.run(batch)
        if not self.forward_only:
            self.phase = f"dp gradient all-reduce over ranks {ctx.layout.group('dp', ctx.rank)}"
            self._all_reduce_grads()
            self.phase = "optimizer step"
            with self.timer.span("optim"):
                self.optimizer.step()
        self.phase = "reading timers"
        events = self.timer.finish()
        loss = torch.stack(losses).sum().item() if losses else None  # sum of loss/m = mean
        return self._record(step, attempt, events, loss)

    def _all_reduce_grads(self) -> None:
        """One flat all-reduce over the DP group, then average (a size-1 group skips it)."""
        group = self.ctx.group("dp")
        if group is None:
            return
        ranks = self.ctx.layout.group("dp", self.ctx.rank)
        with self.timer.range(f"dp all_reduce ranks={ranks}"), self.timer.span("dp"):
            params = list(self.params.values())
            grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
            flat = torch.cat([g.reshape(-1) for g in grads])
            dist.all_reduce(flat, group=group)
            flat.div_(self.ctx.size("dp"))
            for p, piece in zip(params, flat.split([p.numel() for p in params]), strict=True):
                p.grad = piece.view_as(p)

    def _record(
        self, step: int, attempt: int, events: list[dict], loss, stopped: str | None = None
    ) -> ProbeRecord:
        dropped = max(len(events) - MAX_EVENTS, 0)
        if dropped:  # keep every compute and pipeline event; drop the latest TP ones
            keep_tp = MAX_EVENTS - sum(e["kind"] != "tp" for e in events)
            tp_seen = 0
            kept = []
            for e in events:
                tp_seen += e["kind"] == "tp"
                if e["kind"] != "tp" or tp_seen <= keep_tp:
                    kept.append(e)
            events = kept
        finite = loss is not None and loss == loss and abs(loss) != float("inf")
        c = self.ctx.coord  # the protocol's coord: the layout's Coord also holds cp and ep
        return ProbeRecord.model_validate(
            {
                "run": self.info.run, "rank": self.ctx.rank,
                "coord": {"dp": c.dp, "pp": c.pp, "tp": c.tp}, "node": self.ctx.node,
                "step": step, "attempt": attempt,
                "t0": self.timer.t0_wall, "events": events, "dropped_events": dropped,
                "loss": loss if finite else None, "stopped": stopped,
                **memory_fields(self.ctx.device),
            }
        )  # fmt: skip

    def _guard(self, step: int, phase: str | None, fn, *args):
        """Run ``fn``; turn any failure into an error naming this rank, the step and the op."""
        try:
            return fn(*args)
        except (RuntimeError, CommError) as err:
            where = phase or self._where()
            raise StepError(
                f"{self.ctx.describe()} failed at step {step} during {where}: {err}",
                self.ctx.rank,
                step,
            ) from err

    def _where(self) -> str:
        a = self.engine.current
        if self.phase == "pipeline" and a is not None:
            return f"pipeline action {a.kind} microbatch {a.microbatch} chunk {a.chunk}"
        return self.phase

    # -- setup -----------------------------------------------------------------------------
    def _build_chunks(self) -> list[GPTChunk]:
        cfg, ctx = self.cfg, self.ctx
        tp_ranks = ctx.layout.group("tp", ctx.rank)
        self.tp_comm = TPComm(ctx.group("tp"), ctx.size("tp"), ctx.coord.tp, self.timer, tp_ranks)
        pp, nvs = ctx.size("pp"), ctx.size("pp") * cfg.chunks
        chunks = []
        for c in range(cfg.chunks):
            vs = virtual_stage(cfg.schedule, ctx.coord.pp, c, pp)
            if cfg.schedule in TWO_COPIES:  # DualPipe: a stage of one of the two copies
                vs, nvs = stage_of(ctx.coord.pp, c, pp)
            chunk = GPTChunk(cfg.model, vs, nvs, self.tp_comm)
            init_parameters(chunk, cfg.model, cfg.seed, ctx.size("tp"), ctx.coord.tp)
            chunks.append(chunk.to(ctx.device))
        return chunks

    def _checkpointer(self) -> Checkpointer | None:
        cfg = self.cfg
        if not cfg.checkpoint_dir:
            return None
        meta = {"model": asdict(cfg.model), "tp": cfg.tp, "seed": cfg.seed}
        return Checkpointer(
            cfg.checkpoint_dir, cfg.checkpoint_every, cfg.keep_checkpoints, self.ctx.rank,
            self.ctx.coord.tp, meta,
        )  # fmt: skip

    def _save(self, next_step: int) -> None:
        self.checkpointer.save(next_step, self.params, self.optimizer)

    def _restore(self) -> int:
        if not (self.cfg.resume and self.checkpointer):
            return 0
        found = self.checkpointer.latest()
        if found is None:
            if self.ctx.rank == 0:
                print("[probe] --resume: no complete checkpoint yet, starting at step 0")
            return 0
        step = self.checkpointer.load(found[1], self.params, self.optimizer)
        if self.ctx.rank == 0:
            print(f"[probe] resumed from {found[1]} at step {step}", flush=True)
        return step

    def _open_reporter(self, start: int) -> tuple[int, Reporter]:
        """Agree on this launch's attempt number, trim the spool to the steps kept."""
        spool = Spool(self.out_dir / f"rank-{self.ctx.rank:05d}.jsonl")
        previous = spool.last_attempt()
        conflict = previous is not None and not self.cfg.resume
        mine = torch.tensor([-1 if previous is None else previous, int(conflict)])
        agreed = mine.to(self.ctx.device)
        dist.all_reduce(agreed, op=dist.ReduceOp.MAX)
        attempt, conflict = int(agreed[0]) + 1, bool(agreed[1])
        if conflict:
            raise StepError(
                f"spool {spool.path.parent} already holds run {self.info.run!r}: "
                "pass --resume to continue it, or another --run-name / --out",
                self.ctx.rank, start,
            )  # fmt: skip
        spool.keep_before(start)
        hello = HelloFrame(rank=self.ctx.rank, attempt=attempt, info=self.info)
        return attempt, Reporter(spool, self.cfg.server, self.cfg.token, hello)
