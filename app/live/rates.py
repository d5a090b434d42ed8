"""Two small clocks-in-hand helpers: a token bucket (the ingest rate cap) and a sliding
window rate (the ingest rate /metrics reports)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


class TokenBucket:
    """``rate`` tokens per second up to ``burst``; ``take`` says how long to wait for one.

    The caller sleeps for the returned delay instead of dropping the frame: a producer over
    its cap is slowed down (TCP pushes back on it), and nothing it sent is lost.
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate, self.burst, self.clock = rate, float(burst), clock
        self.tokens, self.at = float(burst), clock()

    def take(self) -> float:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        self.tokens -= 1.0
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


class RateWindow:
    """Events per second over the last ``window_s`` seconds, in one-second buckets."""

    def __init__(self, window_s: int = 10, clock: Callable[[], float] = time.monotonic):
        self.window_s, self.clock = window_s, clock
        self.buckets: deque[list[float]] = deque()  # [second, count]

    def add(self, n: int = 1) -> None:
        second = int(self.clock())
        if self.buckets and self.buckets[-1][0] == second:
            self.buckets[-1][1] += n
        else:
            self.buckets.append([second, n])
        self._trim(second)

    def _trim(self, second: int) -> None:
        while self.buckets and self.buckets[0][0] <= second - self.window_s:
            self.buckets.popleft()

    def per_second(self) -> float:
        self._trim(int(self.clock()))
        return sum(n for _, n in self.buckets) / self.window_s
