"""The store's undo log (app/live/undo.py) keeps what a failed transaction must put back: a
key's value before its first change since the last mark. An import of a million records
changes a few keys per rank and per step again and again, so the log must grow with the keys,
not the changes; and whatever the changes, undo restores exactly the state at its mark."""

import random

from app.live.undo import UndoLog


def test_a_key_changed_again_and_again_is_logged_once():
    log, cache = UndoLog(), {"a": 0}
    for i in range(1, 1001):
        log.set(cache, "a", i)
        log.set(cache, ("run", i % 4), i)  # four keys, as four ranks of one run
    assert len(log._log) == 5  # "a" and the four ranks, not 2,000 entries
    log.undo()
    assert cache == {"a": 0}


def test_undo_to_a_mark_restores_the_value_at_the_mark():
    log, cache = UndoLog(), {"a": 0}
    log.set(cache, "a", 1)
    mark = log.mark()
    log.set(cache, "a", 2)
    log.drop(cache, "a")
    log.set(cache, "b", 9)
    log.undo(mark)
    assert cache == {"a": 1}
    log.set(cache, "a", 3)  # logged again after an undo: the whole undo still goes back to 0
    log.undo()
    assert cache == {"a": 0}


def test_any_sequence_of_changes_and_marks_undoes_to_each_state():
    rng = random.Random(26)
    for _ in range(200):
        log, cache = UndoLog(), {k: rng.randrange(3) for k in "abc" if rng.random() < 0.5}
        start, marks = dict(cache), []
        for _ in range(rng.randrange(1, 30)):
            roll = rng.random()
            if roll < 0.15:
                marks.append((log.mark(), dict(cache)))
            elif roll < 0.3:
                log.drop(cache, rng.choice("abc"))
            else:
                log.set(cache, rng.choice("abc"), rng.randrange(9))
        if marks and rng.random() < 0.5:
            at, state = marks[-1]
            log.undo(at)
            assert cache == state
        log.undo()
        assert cache == start
