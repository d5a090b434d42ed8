"""Errors that name who failed, where, and when, instead of a bare backend message."""

from __future__ import annotations


class ProbeError(RuntimeError):
    """Base class: the message is meant for a person and is printed as is."""


class CommError(ProbeError):
    """A collective or point-to-point operation failed; the message names the peers."""


class StepError(ProbeError):
    """A training step failed on one rank: ``rank`` and ``step`` are set."""

    def __init__(self, message: str, rank: int, step: int) -> None:
        super().__init__(message)
        self.rank, self.step = rank, step
