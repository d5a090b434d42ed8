"""sorted_unique is sorted(set(values)) whatever the piece size, duplicates across pieces too."""

import random

import pytest

from app.core.support import sorted_runs


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 64, 16_384])
def test_sorted_unique_equals_sorted_set(monkeypatch, piece):
    monkeypatch.setattr(sorted_runs, "PIECE", piece)
    rng = random.Random(piece)
    for n in (0, 1, 2, 5, 100, 1_000):
        # Few distinct values: many duplicates, so equal values straddle piece boundaries.
        values = [rng.randrange(max(1, n // 4)) * 0.5 for _ in range(n)]
        assert sorted_runs.sorted_unique(values) == sorted(set(values))


def test_no_call_sorts_more_than_a_piece_before_the_merges(monkeypatch):
    monkeypatch.setattr(sorted_runs, "PIECE", 4)
    seen = []

    def counting(xs):
        seen.append(len(xs))
        return sorted(xs)

    monkeypatch.setattr(sorted_runs, "sorted", counting, raising=False)
    assert sorted_runs.sorted_unique(range(40, 0, -1)) == list(range(1, 41))
    # Ten pieces of 4, then two runs per merge: 5 merges of 8, 2 of 16, then 32, then 40.
    assert seen == [4] * 10 + [8] * 5 + [16] * 2 + [32, 40]
