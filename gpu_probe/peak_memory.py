"""This rank's peak memory per step, as ``ProbeRecord``'s memory fields.

On CUDA the two figures the cost model predicts (app/core/cost/memory.py): the caching
allocator's peak allocated (live tensors) and peak reserved (its pool), both since
``reset`` at the step's start, so each record is its own step's peak. ``mem`` stays the
allocated figure there, as older servers read it.

On CPU there is no allocator pool to read, so ``mem_allocated`` and ``mem_reserved`` are
left out (absent, not 0: 0 would claim a measurement) and ``mem`` is the process's peak
resident set since it started: host memory, which the page labels as RSS.

The readings are passed in (``Readings``) so the CUDA branch is tested with fakes on a
machine without a GPU, with no global patching of torch.
"""

from __future__ import annotations

import resource
from collections.abc import Callable
from dataclasses import dataclass

import torch


def peak_rss_bytes() -> int:
    """The process's peak resident set since it started (never reset: the OS keeps one)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux: KiB


@dataclass(frozen=True)
class Readings:
    """Where the figures come from; the defaults are torch's and the OS's."""

    allocated: Callable[[torch.device], int] = torch.cuda.max_memory_allocated
    reserved: Callable[[torch.device], int] = torch.cuda.max_memory_reserved
    reset: Callable[[torch.device], None] = torch.cuda.reset_peak_memory_stats
    rss: Callable[[], int] = peak_rss_bytes


TORCH = Readings()


def reset(device: torch.device, read: Readings = TORCH) -> None:
    """Start a step's peaks afresh (CUDA only: the peak RSS cannot be reset)."""
    if device.type == "cuda":
        read.reset(device)


def memory_fields(device: torch.device, read: Readings = TORCH) -> dict[str, int]:
    """The record's memory fields for the step since ``reset``; CPU: ``mem`` alone."""
    if device.type != "cuda":
        return {"mem": int(read.rss())}
    allocated = int(read.allocated(device))
    # The pool holds every allocated byte, so its peak is never the smaller; the max keeps
    # a reading that says otherwise from costing the step's record (the protocol refuses it).
    reserved = max(int(read.reserved(device)), allocated)
    return {"mem": allocated, "mem_allocated": allocated, "mem_reserved": reserved}
