"""An import's memory is bounded by one rank, not by its rank-steps (issue 25 item 5): what it
holds once prepared does not grow with the steps (the records wait in a spill file), and its
peak while preparing does not grow with the ranks (each rank's spans are spilled as soon as
its file is read, and the cross-rank stages read them back one at a time). Streaming the
records from the spill keeps the store's all or nothing: a read that fails halfway through
the transaction leaves no run.

The traces are synthetic Kineto files (written here): each step a ProfilerStep# range,
MICROBATCHES forward and backward ranges named as actions, and one all-reduce over the
world, at the same times on every rank (their clocks agree)."""

from __future__ import annotations

import argparse
import gc
import json
import random
import sqlite3
import threading
import tracemalloc
from pathlib import Path

import pytest

from app.core.traces import intervals
from app.core.traces.busy import BATCH, Busy
from app.importers import spill as spill_module
from app.importers.compact_records import Records
from app.importers.import_trace import prepare
from app.importers.spill import Spill
from app.importers.trace_store import to_db

pytestmark = pytest.mark.timeout(240)
MICROBATCHES, STEP_US = 16, 10_000


def _x(name: str, cat: str, ts: float, dur: float, **args) -> dict:
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": 1,
            "args": args}  # fmt: skip


def write_traces(out: Path, ranks: int, steps: int) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    slot = 8000 / (2 * MICROBATCHES)
    for rank in range(ranks):
        events = []
        for n in range(steps):
            t0 = n * STEP_US
            events.append(_x(f"ProfilerStep#{n}", "user_annotation", t0, 9500))
            for i in range(2 * MICROBATCHES):
                name = f"F{i}" if i < MICROBATCHES else f"B{i - MICROBATCHES}"
                events.append(_x(name, "user_annotation", t0 + i * slot, slot * 0.9))
            events.append(_x("record_param_comms", "cpu_op", t0 + 8500, 500,
                             **{"Collective name": "allreduce", "dtype": "Float",
                                "Process Group Ranks": list(range(ranks))}))  # fmt: skip
        doc = {"distributedInfo": {"rank": rank, "world_size": ranks, "backend": "gloo"},
               "traceEvents": events}  # fmt: skip
        (out / f"rank{rank}_trace.json").write_text(json.dumps(doc), encoding="utf-8")
    return out


def args_for(paths: Path, run: str = "bounded") -> argparse.Namespace:
    return argparse.Namespace(
        paths=[str(paths)], run=run, dp=None, tp=None, pp=None, order=None, gpus_per_node=8,
        schedule=None, microbatches=None,
    )  # fmt: skip


def traced(make) -> tuple[object, int, int]:
    """``make()``'s result, the bytes it left allocated, and its peak over the start."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        kept = make()
        gc.collect()
        now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return kept, now - before, peak - before


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("bounded")
    out = {key: write_traces(root / f"{key[0]}x{key[1]}", *key)
           for key in ((2, 10), (2, 40), (8, 10))}  # fmt: skip
    prepare(args_for(out[(2, 10)]))  # warm every cache (regexes, pydantic) before measuring
    return out


def test_what_a_prepared_import_holds_does_not_grow_with_its_steps(sets):
    small, held_small, _ = traced(lambda: prepare(args_for(sets[(2, 10)])))
    big, held_big, _ = traced(lambda: prepare(args_for(sets[(2, 40)])))
    assert (len(small.records), len(big.records)) == (20, 80)
    per_rank_step = (held_big - held_small) / (80 - 20)
    # Held as JSON in memory, a record of 33 events was ~2 KB; as a spilled offset, 8 bytes
    # (and a step length for the alignment's median): far under this.
    assert per_rank_step < 300, (held_small, held_big, per_rank_step)
    assert list(big.records)[-1].step == 39 and len(list(big.records)[-1].events) == 33


def test_the_peak_while_preparing_does_not_grow_with_the_ranks(sets):
    _, _, peak_few = traced(lambda: prepare(args_for(sets[(2, 10)])))
    done, _, peak_many = traced(lambda: prepare(args_for(sets[(8, 10)])))
    assert len(done.records) == 80 and done.records.ranks == list(range(8))
    per_rank_step = (peak_many - peak_few) / (80 - 20)
    # Every rank's spans and records together were ~10 KB a rank-step at the peak; what is
    # left is one collective end per rank-step for the alignment, and a few small per-rank
    # values (its file's name, its offset).
    assert per_rank_step < 1500, (peak_few, peak_many, per_rank_step)


def test_a_read_failing_halfway_through_the_store_leaves_no_run(sets, tmp_path, monkeypatch):
    done = prepare(args_for(sets[(2, 10)], run="halfway"))
    db = tmp_path / "d.sqlite3"
    reads = {"n": 0}
    real = Spill.__getitem__

    def failing(self, i):
        reads["n"] += 1
        if reads["n"] == 7:
            raise OSError("the spill file could not be read")
        return real(self, i)

    monkeypatch.setattr(spill_module.Spill, "__getitem__", failing)
    with pytest.raises(OSError):
        to_db(db, done.info, done.records, "halfway")
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 0
    finally:
        conn.close()
    monkeypatch.setattr(spill_module.Spill, "__getitem__", real)
    assert to_db(db, done.info, done.records, "again") == 20  # the same records, whole
    assert to_db(db, done.info, done.records, "again") == 0  # and idempotent


def test_a_spill_reads_back_each_item_in_any_order_and_from_two_threads():
    s = Spill()
    items = [bytes([i % 251]) * (i * 37 % 1000) for i in range(300)]
    for i, item in enumerate(items):
        assert s.append(item) == i
    assert len(s) == 300 and s[-1] == items[-1] and s[0] == items[0] == b""
    walks = [iter(range(300)), iter(range(299, -1, -1))]
    for a, b in zip(*walks, strict=True):  # two walks interleaved: neither moves the other
        assert (s[a], s[b]) == (items[a], items[b])
    bad: list[int] = []

    def reader(order):
        bad.extend(i for i in order if s[i] != items[i])

    threads = [threading.Thread(target=reader, args=(range(k, 300, 3),)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []
    with pytest.raises(IndexError):
        s[300]
    s.close()


def test_records_are_consumed_as_they_are_made(sets):
    done = prepare(args_for(sets[(2, 10)]))
    made = []

    def one_at_a_time():
        for r in done.records:
            made.append(r.step)
            yield r

    again = Records(one_at_a_time())
    assert made == [r.step for r in done.records] and list(again) == list(done.records)


def test_the_compute_union_folded_as_kernels_stream_is_the_union_of_them_all():
    # Kernels out of order by up to 50 us (several streams in one file), over several folds.
    rnd = random.Random(1)
    for n in (10, BATCH * 3 + 7, BATCH * 5):
        busy, given, t = Busy(), [], 0.0
        for _ in range(n):
            t += rnd.uniform(0, 3)
            a = t + rnd.uniform(-50, 5) if rnd.random() < 0.2 else t
            given.append((a, a + rnd.uniform(0, 4)))
            busy.add(*given[-1])
        assert list(busy.disjoint()) == intervals.union(given), n
