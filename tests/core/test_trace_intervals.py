"""Interval arithmetic (app/core/traces/intervals.py)."""

from app.core.traces.intervals import covered, uncovered, union

BUSY = union([(5, 7), (1, 2), (1.5, 3), (10, 12)])


def test_union_is_sorted_and_disjoint():
    assert BUSY == [(1, 3), (5, 7), (10, 12)]


def test_covered_and_uncovered_add_up_to_the_interval():
    for start, end in ((0, 11), (2.5, 6), (3, 4), (6, 6.5), (11, 20)):
        gaps = uncovered(start, end, BUSY)
        assert covered(start, end, BUSY) + sum(b - a for a, b in gaps) == end - start
    assert uncovered(0, 11, BUSY) == [(0, 1), (3, 5), (7, 10)]
    assert uncovered(6, 6.5, BUSY) == [] and uncovered(3, 4, BUSY) == [(3, 4)]
