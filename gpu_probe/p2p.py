"""Activations and gradients between pipeline chunks: non-blocking, matched by tag.

Sends never block the sender. A send is queued and posted at the next action boundary,
together with that action's receive in one ``batch_isend_irecv``, or on its own when the
next action receives nothing. Posting "send to next + receive from next" as one group is
what Megatron's ``send_forward_recv_backward`` and torch's Schedule1F1B do: on NCCL two ranks
that each post a lone blocking send before their receive would deadlock in 1F1B's steady
state. On gloo every op is its own asynchronous Work, so only receives are waited on.

Timing: ``pp_recv`` spans from the moment an action asks for its input until it arrives
(transfer plus waiting for the producer). ``pp_send`` spans from posting to the first action
boundary at which the send is seen complete, so its end is an upper bound.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpu_probe.errors import CommError

ACTIVATION, GRADIENT = 0, 1


def message_tag(direction: int, microbatch: int, dest_vstage: int, nvstages: int) -> int:
    """Unique within a step, computed the same way on both ends."""
    return (microbatch * 2 + direction) * nvstages + dest_vstage


class PipeChannel:
    def __init__(self, rank: int, timer, shape, dtype: torch.dtype, device) -> None:
        self.rank, self.timer = rank, timer
        self.shape, self.dtype, self.device = tuple(shape), dtype, device
        self._queued: list[tuple[torch.Tensor, int, int, tuple]] = []  # tensor, dst, tag, label
        self._inflight: list[tuple[list, object, torch.Tensor]] = []  # (works, span, tensor)
        self._local: dict[int, torch.Tensor] = {}  # same-rank handoffs (pp = 1)

    def send(self, tensor: torch.Tensor, dst: int, tag: int) -> None:
        if dst == self.rank:
            self._local[tag] = tensor
        else:  # labelled with the sending action, which may be over when the send is posted
            self._queued.append((tensor, dst, tag, self.timer.action))

    def recv(self, src: int, tag: int) -> torch.Tensor:
        """Post queued sends with this receive, wait for the receive only, return it."""
        if src == self.rank:
            self.flush()
            return self._local.pop(tag).detach()
        buf = torch.empty(self.shape, dtype=self.dtype, device=self.device)
        span = self.timer.start("pp_recv", peer=src)
        recv_op = dist.P2POp(dist.irecv, buf, src, tag=tag)
        try:
            for work in self._post([recv_op]):
                work.wait()
        except RuntimeError as err:
            raise CommError(f"receive from rank {src} (tag {tag}) failed: {err}") from err
        self.timer.stop(span)
        return buf

    def flush(self) -> None:
        """Post queued sends now: the next action has no receive to pair them with."""
        if self._queued:
            self._post([])

    def reap(self) -> None:
        """Close the spans of sends that have completed since the last boundary."""
        still = []
        for works, span, tensor in self._inflight:
            if all(w.is_completed() for w in works):
                self.timer.stop(span)
            else:
                still.append((works, span, tensor))
        self._inflight = still

    def drain(self) -> None:
        """End of step: every send must be delivered before buffers are reused."""
        self.flush()
        for works, span, _ in self._inflight:
            try:
                for work in works:
                    work.wait()
            except RuntimeError as err:
                raise CommError(f"send to rank {span.peer} failed: {err}") from err
            self.timer.stop(span)
        self._inflight = []
        if self._local:
            raise RuntimeError(f"unconsumed same-rank messages at step end: {list(self._local)}")

    def _post(self, recv_ops: list) -> list:
        """Issue queued sends plus ``recv_ops``; return the Works to wait on for the receives."""
        send_ops = [dist.P2POp(dist.isend, t, dst, tag=tag) for t, dst, tag, _ in self._queued]
        spans = [self.timer.start("pp_send", *label, peer=dst) for _, dst, _, label in self._queued]
        try:
            works = dist.batch_isend_irecv(send_ops + recv_ops)
        except RuntimeError as err:
            peers = sorted({op.peer for op in send_ops + recv_ops})
            raise CommError(f"posting send/recv with ranks {peers} failed: {err}") from err
        n = len(send_ops)
        # gloo returns one Work per op; NCCL coalesces the group into shared Works.
        per_op = len(works) == len(send_ops) + len(recv_ops)
        for i, (queued, span) in enumerate(zip(self._queued, spans, strict=True)):
            self._inflight.append(([works[i]] if per_op else works, span, queued[0]))
        self._queued = []
        return works[n:] if per_op else works
