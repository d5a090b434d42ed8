"""Execute one rank's app.core.schedules action list with real tensors and real messages.

``F(mb, chunk)``: receive the activation from the previous virtual stage (or embed the
tokens), run the chunk, send the output on (or compute the loss / m on the last stage).
``B(mb, chunk)``: receive the output gradient (the last stage starts from its loss),
backpropagate, send the input gradient back. ``W(mb, chunk)`` exists only for split-backward
schedules (zb-h1): Qi et al. 2024 §2 split the backward into B, the gradient w.r.t. the
chunk's input that the previous stage waits for, and W, the weight gradients that can wait:

    B: torch.autograd.grad(out, [input] + anchors, grad_out)
    W: for each anchor, its module's weight-gradient formula (gpu_probe.weight_grad)

where an anchor is the output of a module that owns weights (linear, LayerNorm, embedding),
captured with the module's input by a forward hook. B computes every activation gradient
(and runs every backward TP all-reduce) exactly once and no weight gradient; W only
multiplies saved tensors, so nothing is computed twice.

Outputs leave when the simulator says (app.core.schedules.units.unit_plan): in DualPipeV an
overlapped pair (F, then a whole backward of the other chunk) first receives both inputs and
sends both outputs after its last action, as torch's OVERLAP_F_B does; DualPipe sends and
receives as dualpipe.py queues them (app.core.schedules.dualpipe); every other action sends
when it ends. DualPipe's two copies of a stage sum their gradients after the step
(gpu_probe.copies).
"""

from __future__ import annotations

import time
from contextlib import nullcontext

import torch

from app.core.schedules import (
    FORWARD_ONLY,
    SPLIT_BACKWARD,
    TWO_COPIES,
    Action,
    ScheduleName,
    build,
    stage_location,
    virtual_stage,
)
from app.core.schedules.units import unit_plan
from gpu_probe.copies import sum_copies
from gpu_probe.data import StepBatch
from gpu_probe.mesh import MeshContext
from gpu_probe.model import GPTChunk, lm_loss
from gpu_probe.p2p import ACTIVATION, GRADIENT, PipeChannel, message_tag
from gpu_probe.weight_grad import SUPPORTED, accumulate_weight_grads

Key = tuple[int, int]  # (microbatch, chunk)


class PipelineEngine:
    def __init__(
        self,
        schedule: ScheduleName,
        microbatches: int,
        virtual_stages: int,
        ctx: MeshContext,
        chunks: list[GPTChunk],
        channel: PipeChannel,
        timer,
        autocast_dtype: torch.dtype | None = None,
        slow_s: float = 0.0,
    ) -> None:
        pp, stage = ctx.size("pp"), ctx.coord.pp
        self.schedule, self.microbatches, self.ctx = schedule, microbatches, ctx
        self.actions: list[Action] = build(schedule, pp, microbatches, virtual_stages)[stage]
        self.release, self.waits, _ = unit_plan(schedule, self.actions, stage, pp)
        self.chunks, self.channel, self.timer = chunks, channel, timer
        self.vstages = [virtual_stage(schedule, stage, c, pp) for c in range(len(chunks))]
        self.nvstages = pp * len(chunks)
        self.split = schedule in SPLIT_BACKWARD
        self.forward_only = schedule in FORWARD_ONLY
        self.autocast_dtype = autocast_dtype
        self.slow_s = slow_s  # --slow-rank: a sleep in each forward, as a slow GPU would take
        self.current: Action | None = None  # for error messages
        self._capture: list | None = None
        if self.split:
            self._hook_weight_owners()
        self._reset()

    def run(self, batch: StepBatch) -> list[torch.Tensor]:
        """Run every action of this step; return the last stage's per-microbatch losses."""
        self._reset()
        self.batch = batch
        for i, action in enumerate(self.actions):
            self.current, self.index = action, i
            self.channel.reap()
            for k in self.waits[i]:  # receives posted with this action's (a pair's B input)
                self._prefetch(self.actions[k])
            {"F": self._forward, "B": self._backward, "W": self._weight}[action.kind](action)
            self._release(i)
        self.current = None
        self.channel.drain()
        losses, self.batch = self._losses, None
        if self.schedule in TWO_COPIES:
            pp, stage = self.ctx.size("pp"), self.ctx.coord.pp
            losses = sum_copies(self.chunks, self.ctx.stage_rank(pp - 1 - stage), losses)
        self._reset()
        return losses

    # -- actions ---------------------------------------------------------------------------
    def _forward(self, a: Action) -> None:
        vs, chunk = self.vstages[a.chunk], self.chunks[a.chunk]
        self.timer.action = (a.microbatch, a.chunk)
        x = self._input(a, vs)
        grad_mode = torch.no_grad() if self.forward_only else nullcontext()
        with self.timer.span("F", a.microbatch, a.chunk), grad_mode, self._autocast():
            self._capture = [] if self.split and not self.forward_only else None
            out = chunk(x)
            if self.slow_s:
                time.sleep(self.slow_s)
            if chunk.is_last:
                out = lm_loss(out, self.batch.targets[a.microbatch]) / self.microbatches
                self._losses.append(out.detach())
            else:
                out = out.to(self.channel.dtype)  # one boundary dtype for every message
            anchors, self._capture = self._capture, None
        if not self.forward_only:
            self._saved[(a.microbatch, a.chunk)] = (None if chunk.is_first else x, out, anchors)
        if not chunk.is_last:
            dst = self._holder(vs + 1)
            tag = message_tag(ACTIVATION, a.microbatch, vs + 1, self.nvstages)
            self._post(out.detach(), dst, tag)

    def _backward(self, a: Action) -> None:
        vs = self.vstages[a.chunk]
        self.timer.action = (a.microbatch, a.chunk)
        x, out, anchors = self._saved.pop((a.microbatch, a.chunk))
        if self.chunks[a.chunk].is_last:
            grad_out = None  # out is the loss
            self.channel.flush()
        else:
            grad_out = self._prefetched.pop(a, None)
            if grad_out is None:
                grad_out = self._recv_grad(a)
        with self.timer.span("B", a.microbatch, a.chunk):
            grad_in = self._input_grad(a, x, out, grad_out, anchors)
        if not self.chunks[a.chunk].is_first:
            tag = message_tag(GRADIENT, a.microbatch, vs - 1, self.nvstages)
            self._post(grad_in, self._holder(vs - 1), tag)

    def _recv_grad(self, a: Action) -> torch.Tensor:
        vs = self.vstages[a.chunk]
        tag = message_tag(GRADIENT, a.microbatch, vs, self.nvstages)
        return self.channel.recv(self._holder(vs + 1), tag)

    def _prefetch(self, a: Action) -> None:
        """Receive a later action's input now: a pair's B gradient, or the next F's input."""
        chunk = self.chunks[a.chunk]
        if a in self._prefetched or (chunk.is_last if a.kind == "B" else chunk.is_first):
            return
        self.timer.action = (a.microbatch, a.chunk)
        receive = self._recv_grad if a.kind == "B" else self._recv_input
        self._prefetched[a] = receive(a)

    def _post(self, tensor: torch.Tensor, dst: int, tag: int) -> None:
        if dst == self.channel.rank:  # a same-rank handoff is no message: it waits for nothing
            self.channel.send(tensor, dst, tag)
        else:
            due = self.release[self.index]
            self._outbox.append((due, tensor, dst, tag, self.timer.action))

    def _release(self, done: int) -> None:
        """Action ``done`` is over: hand the outputs due by now to the channel, labelled with
        their actions (a pair's outputs wait for its last action)."""
        keep = []
        for due, tensor, dst, tag, label in self._outbox:
            if due <= done:
                self.timer.action = label
                self.channel.send(tensor, dst, tag)
            else:
                keep.append((due, tensor, dst, tag, label))
        self._outbox = keep

    def _input_grad(self, a: Action, x, out, grad_out, anchors) -> torch.Tensor | None:
        if not self.split:
            torch.autograd.backward(out, grad_out)  # full backward: weights accumulate here
            return None if x is None else x.grad
        wanted = ([x] if x is not None else []) + [output for _, _, output in anchors]
        grads = torch.autograd.grad(out, wanted, grad_out)
        n = 1 if x is not None else 0
        saved = [(module, inp) for module, inp, _ in anchors]
        self._deferred[(a.microbatch, a.chunk)] = list(zip(saved, grads[n:], strict=True))
        return grads[0] if x is not None else None

    def _weight(self, a: Action) -> None:
        self.channel.flush()
        self.timer.action = (a.microbatch, a.chunk)
        with self.timer.span("W", a.microbatch, a.chunk):
            for (module, inp), grad in self._deferred.pop((a.microbatch, a.chunk)):
                accumulate_weight_grads(module, inp, grad)

    # -- helpers ---------------------------------------------------------------------------
    def _input(self, a: Action, vs: int) -> torch.Tensor:
        if self.chunks[a.chunk].is_first:
            self.channel.flush()
            return self.batch.tokens[a.microbatch]
        x = self._prefetched.pop(a, None)
        if x is None:
            x = self._recv_input(a)
        return x if self.forward_only else x.requires_grad_()

    def _recv_input(self, a: Action) -> torch.Tensor:
        vs = self.vstages[a.chunk]
        tag = message_tag(ACTIVATION, a.microbatch, vs, self.nvstages)
        return self.channel.recv(self._holder(vs - 1), tag)

    def _holder(self, vstage: int) -> int:
        """Global rank that runs virtual stage ``vstage`` in this rank's (dp, tp) replica."""
        stage, _ = stage_location(self.schedule, vstage, self.ctx.size("pp"))
        return self.ctx.stage_rank(stage)

    def _autocast(self):
        if self.autocast_dtype is None:
            return nullcontext()
        return torch.autocast(self.ctx.device.type, dtype=self.autocast_dtype)

    def _reset(self) -> None:
        self._saved: dict[Key, tuple] = {}
        self._deferred: dict[Key, list] = {}
        self._losses: list[torch.Tensor] = []
        self._outbox: list[tuple] = []  # (due, tensor, dst, tag, label) until action due ends
        self._prefetched: dict[Action, torch.Tensor] = {}  # inputs received ahead of their action
        self.index = 0

    def _hook_weight_owners(self) -> None:
        def hook(module, inputs, output):
            if self._capture is not None and torch.is_grad_enabled():
                self._capture.append((module, inputs[0], output))

        for chunk in self.chunks:
            for module in chunk.modules():
                if any(True for _ in module.parameters(recurse=False)):
                    if not isinstance(module, SUPPORTED):
                        raise TypeError(f"split backward cannot handle {type(module).__name__}")
                    module.register_forward_hook(hook)
