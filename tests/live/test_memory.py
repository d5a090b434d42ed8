"""Measured memory in live runs (issue 23): a record's per-step peak allocated and reserved
(CUDA only) are validated, stored, served by the steps API and set beside the cost model's
prediction on the run page; a CPU run has neither and says so, and its one figure, the
host's peak RSS, is labelled as RSS."""

import asyncio
import json
import warnings

import pytest
from pydantic import ValidationError
from support import (
    ROOT,
    TOKEN,
    ServerThread,
    get_json,
    producers,
    record_frame,
    records,
    run_info,
)

from app.core.inputs.protocol import MAX_MEM_BYTES, ProbeRecord, parse_frame
from app.live import a_priori, run_memory
from app.live.store import Store
from app.live.store_read import Reader
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

pytestmark = pytest.mark.timeout(60)
GIB = 2**30


def cuda_info(run: str, **kw):
    return run_info(run, **kw).model_copy(update={"device": "cuda"})


def gpu_records(info, step: int) -> list[dict]:
    """The fake probe's records with the CUDA peaks a GPU probe sends: rank r allocates
    (r + 1) GiB and reserves a quarter more."""
    out = []
    for rec in records(info, step):
        alloc = (rec["rank"] + 1) * GIB
        out.append(rec | {"mem": alloc, "mem_allocated": alloc, "mem_reserved": alloc * 5 // 4})
    return out


# -- the protocol ------------------------------------------------------------------------------
def _one(**changes) -> dict:
    return records(run_info("p"), 0)[0] | changes


def test_the_fields_are_optional_and_an_old_record_without_them_still_loads():
    rec = ProbeRecord.model_validate(_one())
    assert rec.mem_allocated is None and rec.mem_reserved is None
    assert "mem_allocated" not in rec.model_dump_json(exclude_none=True)


def test_valid_peaks_are_kept_at_the_bounds_too():
    rec = ProbeRecord.model_validate(_one(mem_allocated=3 * GIB, mem_reserved=4 * GIB))
    assert (rec.mem_allocated, rec.mem_reserved) == (3 * GIB, 4 * GIB)
    edge = ProbeRecord.model_validate(_one(mem_allocated=0, mem_reserved=MAX_MEM_BYTES))
    assert (edge.mem_allocated, edge.mem_reserved) == (0, MAX_MEM_BYTES)


BAD = [
    ("negative allocated", {"mem_allocated": -1}, "mem_allocated"),
    ("negative reserved", {"mem_reserved": -5}, "mem_reserved"),
    ("absurd allocated", {"mem_allocated": MAX_MEM_BYTES + 1}, "mem_allocated"),
    ("reserved beyond SQLite", {"mem_reserved": 2**63}, "mem_reserved"),
    ("allocated as a string", {"mem_allocated": "1024"}, "mem_allocated"),
    ("reserved as a float", {"mem_reserved": 1024.0}, "mem_reserved"),
    ("reserved as a boolean", {"mem_reserved": True}, "mem_reserved"),
    ("reserved below allocated", {"mem_allocated": 2 * GIB, "mem_reserved": GIB}, "mem_reserved"),
]


@pytest.mark.parametrize("what,changes,field", BAD, ids=[w for w, _, _ in BAD])
def test_a_malformed_peak_is_refused_naming_its_field(what, changes, field):
    with pytest.raises(ValidationError) as exc:
        parse_frame(record_frame(_one(**changes)))
    where = [".".join(map(str, e["loc"])) + " " + e["msg"] for e in exc.value.errors()]
    assert any(field in w for w in where), (what, where)


def test_over_the_socket_a_bad_peak_is_a_bad_frame_naming_the_field_and_nothing_is_lost(tmp_path):
    info = cuda_info("ws-mem", pp=2, steps=3)

    async def stream(srv) -> list[dict]:
        replies = []
        async with producers(srv.ws, info, 1) as (ws,):
            good = gpu_records(info, 0)[0]
            for frame in (good | {"mem_reserved": -1, "step": 1}, good):
                await ws.send(record_frame(frame))
                replies.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
        return replies

    with ServerThread(create_app(Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN))) as srv:
        bad, ack = asyncio.run(asyncio.wait_for(stream(srv), 40))
        (stored,) = get_json(srv.base, "/api/runs/ws-mem/steps")["records"]
    assert bad["type"] == "error" and bad["code"] == "bad_frame" and not bad["fatal"]
    assert "record.mem_reserved" in bad["message"] and "-1" not in bad["message"]
    assert (ack["type"], ack["step"]) == ("ack", 0)
    assert (stored["mem_allocated"], stored["mem_reserved"]) == (GIB, GIB * 5 // 4)


# -- the store and the steps API ---------------------------------------------------------------
def test_the_store_keeps_the_peaks_and_loads_records_without_them(tmp_path):
    path = tmp_path / "s.sqlite3"
    store = Store(path)
    gpu, cpu = cuda_info("gpu", pp=2), run_info("cpu", pp=2)
    ops = [("hello", (gpu, 0, 0, 1.0)), ("hello", (cpu, 0, 0, 1.0))]
    ops += [("record", (ProbeRecord.model_validate(r), 2.0)) for r in gpu_records(gpu, 0)]
    ops += [("record", (ProbeRecord.model_validate(r), 2.0)) for r in records(cpu, 0)]
    store.transaction(ops)
    store.close()  # reopened: what was acknowledged is what is read
    reader = Reader(path)
    gpu_rows, _ = reader.steps("gpu", -1, 100)
    cpu_rows, _ = reader.steps("cpu", -1, 100)
    reader.close()
    assert [(r["mem_allocated"], r["mem_reserved"]) for r in gpu_rows] == [
        (GIB, GIB * 5 // 4),
        (2 * GIB, 2 * GIB * 5 // 4),
    ]
    assert all("mem_allocated" not in r and "mem_reserved" not in r for r in cpu_rows)
    assert all(ProbeRecord.model_validate(r).mem_allocated is None for r in cpu_rows)


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db=tmp_path / "a.sqlite3", ingest_token=TOKEN))) as c:
        yield c


def _seed(client, info, make=records, steps=2):
    ops = [("hello", (info, 0, 0, 1.0))]
    for step in range(steps):
        ops += [("record", (ProbeRecord.model_validate(r), 2.0)) for r in make(info, step)]
    client.app.state.live.store.transaction(ops)


def test_the_steps_api_serves_the_peaks_and_leaves_them_out_for_cpu(client):
    _seed(client, cuda_info("gpu-run", dp=2, pp=2), gpu_records)
    _seed(client, run_info("cpu-run", pp=2))
    body = client.get("/api/runs/gpu-run/steps?since=0").json()
    assert {(r["rank"], r["mem_allocated"], r["mem_reserved"]) for r in body["records"]} == {
        (k, (k + 1) * GIB, (k + 1) * GIB * 5 // 4) for k in range(4)
    }
    cpu = client.get("/api/runs/cpu-run/steps").json()["records"]
    assert cpu and all("mem_allocated" not in r and "mem_reserved" not in r for r in cpu)
    assert all(r["mem"] > 0 for r in cpu)  # the host RSS figure is kept


# -- the page's data ---------------------------------------------------------------------------
def test_a_gpu_runs_analysis_sets_each_ranks_peaks_beside_its_stages_prediction(client):
    info = cuda_info("gpu-page", dp=2, pp=2)
    _seed(client, info, gpu_records)
    mem = client.get("/api/runs/gpu-page/analysis").json()["memory"]
    model = run_memory.predicted(a_priori.predict(info, client.app.state.hardware))
    assert mem["device"] == "cuda" and mem["measured"] and "error" not in mem["predicted"]
    assert [r["rank"] for r in mem["per_rank"]] == [0, 1, 2, 3]
    for r in mem["per_rank"]:
        stage = model["per_stage"][r["stage"]]
        assert r["absent"] is None and r["rss_bytes"] is None  # on CUDA mem is not RSS
        assert r["allocated_bytes"] == (r["rank"] + 1) * GIB
        assert r["predicted"] == {k: stage[k] for k in run_memory.PREDICTED}
        assert r["allocated_ratio"] == pytest.approx(
            r["allocated_bytes"] / stage["allocated_bytes"]
        )
        assert r["reserved_ratio"] == pytest.approx(r["reserved_bytes"] / stage["reserved_bytes"])
    # The first stage holds the embedding: the model predicts it fuller than the last.
    first, last = model["per_stage"]
    assert first["allocated_bytes"] > last["allocated_bytes"] > 0


def test_a_cpu_runs_analysis_says_not_measured_and_labels_its_figure_rss(client):
    _seed(client, run_info("cpu-page", pp=2))
    mem = client.get("/api/runs/cpu-page/analysis").json()["memory"]
    assert mem["device"] == "cpu" and not mem["measured"]
    for r in mem["per_rank"]:
        assert r["absent"] == "cpu" and r["allocated_bytes"] is None and r["reserved_bytes"] is None
        assert r["allocated_ratio"] is None and r["rss_bytes"] == 1_000_000 * (2 - r["stage"])
        assert r["predicted"]["allocated_bytes"] > 0  # the prediction is shown all the same


def test_a_gpu_record_from_an_older_probe_is_not_reported_rather_than_cpu(client):
    _seed(client, cuda_info("old-gpu", pp=2))  # CUDA, but records without the two fields
    mem = client.get("/api/runs/old-gpu/analysis").json()["memory"]
    assert {r["absent"] for r in mem["per_rank"]} == {"not_reported"}
    assert all(r["rss_bytes"] is None for r in mem["per_rank"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_run_page_has_the_memory_card_and_words_a_cpu_runs_figure_as_rss(client, lang):
    _seed(client, run_info("cpu-words", pp=2))
    _seed(client, cuda_info("gpu-words", pp=2), gpu_records)
    words = json.loads((ROOT / f"app/i18n/locales/{lang}.json").read_text("utf-8"))["live"]
    cpu = client.get(f"/runs/cpu-words?lang={lang}").text
    gpu = client.get(f"/runs/gpu-words?lang={lang}").text
    assert 'id="memory-table"' in cpu and words["live.memory"] in cpu
    assert words["live.memory.cpu_hint"] in cpu  # shown by the page on a CPU run
    assert f">{words['live.metric.mem_rss']}</option>" in cpu
    assert f">{words['live.metric.mem_bytes']}</option>" in gpu
    assert f">{words['live.metric.mem_rss']}</option>" not in gpu
