"""An import's records are held as JSON until the store takes them (compact_records.py): read
back they are the records built, field for field; the store's ops come in the order it
needs them, as often as it walks them; and they hold a fraction of the objects' memory."""

import argparse
import tracemalloc
from pathlib import Path

import pytest

from app.importers.compact_records import Ops, Records
from app.importers.import_trace import prepare

pytestmark = pytest.mark.timeout(120)
GLOO = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"


@pytest.fixture(scope="module")
def built():
    args = argparse.Namespace(
        paths=[str(GLOO)], run="compact", dp=None, tp=None, pp=None, order=None,
        gpus_per_node=8, schedule=None, microbatches=None,
    )  # fmt: skip
    done = prepare(args)
    return done.records, list(done.records)


def test_records_read_back_as_built(built):
    compact, objects = built
    assert isinstance(compact, Records) and len(compact) == len(objects) == 12
    assert list(compact) == objects and compact[3] == objects[3] and compact[-1] == objects[-1]
    assert compact[2:5] == objects[2:5]
    assert compact.ranks == [0, 1, 2, 3]
    assert Records.of(compact) is compact


def test_ops_are_hello_records_tail_in_order_each_walk(built):
    compact, objects = built
    ops = Ops([("hello", (0,))], compact, [("status", ()), ("event", ())], now=5.0)
    walked = list(ops)
    assert len(ops) == len(walked) == 15
    assert walked[0] == ("hello", (0,)) and walked[-2:] == [("status", ()), ("event", ())]
    assert [a for name, a in walked[1:-2]] == [(r, 5.0) for r in objects]
    assert list(ops) == walked  # the store walks a failed batch again, op by op
    assert ops[1] == ("record", (objects[0], 5.0)) and ops[-1] == ("event", ())
    with pytest.raises(IndexError):
        ops[15]


def held(make) -> int:
    tracemalloc.start()
    try:
        kept = make()
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del kept
    return size


def test_compact_records_hold_a_fraction_of_the_objects(built):
    compact, objects = built
    as_objects = held(lambda: [r.model_copy(deep=True) for r in objects])
    as_json = held(lambda: Records(objects))
    assert as_json * 3 < as_objects, (as_json, as_objects)
