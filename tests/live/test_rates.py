"""The ingest rate cap slows a producer down instead of dropping it; /metrics' rate window."""

from app.live.rates import RateWindow, TokenBucket


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_bucket_allows_a_burst_then_paces_at_the_rate():
    clock = Clock()
    bucket = TokenBucket(rate=100.0, burst=10, clock=clock)
    assert [bucket.take() for _ in range(10)] == [0.0] * 10
    assert bucket.take() == 0.01  # one token short: wait 1/rate
    clock.t = 1.0  # refills, but never past the burst
    assert [bucket.take() for _ in range(10)] == [0.0] * 10


def test_the_window_counts_the_last_seconds_only():
    clock = Clock()
    window = RateWindow(window_s=10, clock=clock)
    for second in range(20):
        clock.t = second + 0.5
        window.add(5)
    assert window.per_second() == 5.0
    clock.t = 40.0
    assert window.per_second() == 0.0
