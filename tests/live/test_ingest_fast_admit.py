"""A record's admission against its connection's hello (issue 26 item 11: the common case is
checked in one comparison, found once at the hello): every reason to refuse a record still
refuses it, named as before, in a records frame as alone, and an admitted record reaches
the writer as it came (or within the run's events cap)."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest
from support import hello, records, run_info

from app.live.config import LiveConfig
from app.live.ingest_session import PendingBatch, Session
from app.live.stats import IngestStats
from app.live.store import Welcome

pytestmark = pytest.mark.timeout(60)
INFO = run_info("admit", dp=2, tp=2, pp=2, steps=6)
RANK = 5


class _Writer:
    def __init__(self) -> None:
        self.batches: list[list] = []

    def submit(self, op, *args):
        future = asyncio.get_running_loop().create_future()
        future.set_result(Welcome(None))
        return future

    def submit_many(self, ops):
        self.batches.append(ops)
        return asyncio.get_running_loop().create_future()


async def _session(attempt: int = 1) -> tuple[Session, _Writer]:
    writer = _Writer()

    async def watch(info):
        return None

    live = SimpleNamespace(
        stats=IngestStats(), config=LiveConfig(), writer=writer, watch=watch,
        liveness=SimpleNamespace(connected=lambda *a, **k: None),
    )  # fmt: skip
    session = Session(live)
    (ack,) = await session.handle(hello(INFO, RANK, attempt=attempt), None)
    assert json.loads(ack)["type"] == "ack"
    return session, writer


def _rec(at: int = 2, **update) -> dict:
    return records(INFO, at, t0=100.0)[RANK] | update


async def _frame(session: Session, recs: list[dict]) -> list:
    return await session.handle(json.dumps({"type": "records", "records": recs}), None)


REFUSED = [
    ("another run", {"run": "other"}, "record for (other, 5)"),
    ("another rank", {"rank": 4}, "record for (admit, 4) on a connection of rank 5"),
    ("a later attempt", {"attempt": 2}, "attempt 2 after a hello of attempt 1"),
    ("past the run", {"step": 6}, "step 6 beyond the run's 6 steps"),
    ("another place", {"coord": {"dp": 0, "pp": 1, "tp": 1}}, "sits at dp=1 pp=0 tp=1"),
]


@pytest.mark.parametrize(("name", "update", "reason"), REFUSED, ids=[r[0] for r in REFUSED])
def test_each_reason_refuses_its_record_alone(name, update, reason):
    async def go():
        session, writer = await _session()
        replies = await _frame(session, [_rec(1), _rec(2, **update), _rec(3)])
        batch, err = replies
        assert isinstance(batch, PendingBatch) and [r.step for r in batch.recs] == [1, 3]
        message = json.loads(err)["message"]
        assert message.startswith("records.1: ") and reason in message
        assert session.strikes == 1 and len(writer.batches) == 1

    asyncio.run(go())


def test_an_admitted_record_goes_to_the_writer_as_it_came():
    async def go():
        session, writer = await _session()
        sent = [_rec(s, attempt=a) for s, a in ((0, 0), (4, 1), (5, 1))]
        (batch,) = await _frame(session, sent)
        stored = [args[0] for _, args in writer.batches[0]]
        assert [(r.step, r.attempt, len(r.events)) for r in stored] == [
            (r["step"], r["attempt"], len(r["events"])) for r in sent
        ]
        assert batch.recs == stored and session.strikes == 0

    asyncio.run(go())


def test_records_before_the_hello_are_refused():
    async def go():
        writer = _Writer()
        live = SimpleNamespace(stats=IngestStats(), config=LiveConfig(), writer=writer)
        (err,) = await _frame(Session(live), [_rec(1)])
        assert "say hello before sending records" in json.loads(err)["message"]
        assert writer.batches == []

    asyncio.run(go())


def test_a_record_over_the_events_cap_is_fitted_not_passed_through():
    async def go():
        session, writer = await _session()
        session.cap = 10  # as a run of a larger world would have it
        (batch,) = await _frame(session, [_rec(1)])
        (stored,) = [args[0] for _, args in writer.batches[0]]
        dropped = len(_rec(1)["events"]) - len(stored.events)
        assert len(stored.events) <= 10 and stored.dropped_events == dropped > 0

    asyncio.run(go())
