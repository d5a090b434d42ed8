"""DeepSpeed's timer lines (``"wall_clock_breakdown": true``; deepspeed/utils/timer.py and
deepspeed/runtime/engine.py) imported as a measured run (issue 25 item 3): each optimizer
step's fwd, bwd_inner, bwd_allreduce and step as F, B, dp and the optimizer, what the log does
not time left blank; a malformed timer line is refused naming the file and line, and the run
lands on /runs/<name> as a Megatron log's does."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from test_import_logs import stored
from test_import_trace import served

from app.core.traces import TraceError
from app.core.traces.deepspeed_log import parse_lines
from app.importers.import_trace import main
from app.importers.log_files import DEEPSPEED, MEGATRON, file_format
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(120)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOG = FIXTURES / "deepspeed" / "deepspeed_zero2_dp4.log"
TOKEN = "deepspeed-test-token-0123456789"


def spent(phases) -> dict[str, float]:
    out: dict[str, float] = {}
    for p in phases:
        if p.kind:
            out[p.kind] = out.get(p.kind, 0.0) + p.end_s - p.start_s
    return out


def test_the_global_timer_lines_are_rank_0s_optimizer_steps():
    log = parse_lines(LOG.read_text().splitlines(keepends=True), "ds.log")
    assert (log.source, log.hints) == ("deepspeed", {"world": 4})
    assert [(st.rank, st.step) for st in log.steps] == [(0, 1), (0, 2), (0, 3)]
    first = log.steps[0]
    # The first global line: fwd 82.05 | bwd 178.26 | bwd_inner 165.80 | bwd_allreduce 12.44
    # | step 9.87; the micro-step lines before it are not stored.
    assert spent(first.phases) == pytest.approx(
        {"F": 0.08205, "B": 0.16580, "dp": 0.01244, "optim": 0.00987}, abs=1e-9)  # fmt: skip
    laid = [(p.name, p.kind) for p in first.phases]
    assert laid == [("fwd", "F"), ("bwd_inner", "B"), ("bwd_allreduce", "dp"),
                    ("step", "optim"), ("bwd", None)]  # fmt: skip
    bwd = first.phases[-1]
    assert (bwd.start_s, bwd.end_s) == (0.0, pytest.approx(0.17826))  # a total, not laid out
    # No time stamps on the lines: steps lie end to end, step 2 where step 1's phases end.
    assert log.steps[1].t0 == pytest.approx(0.08205 + 0.16580 + 0.01244 + 0.00987)
    assert any("gradient_accumulation_steps" in n and "6 micro-step" in n for n in log.notes)


def test_every_printing_rank_counts_its_own_steps_and_the_pipeline_lines_join_them():
    # Two ranks' lines interleaved behind a launcher's prefix, and the pipeline engine's
    # send/receive line after each step (deepspeed/runtime/pipe/engine.py, every
    # steps_per_print=5 steps, totals since the last).
    text = ["  steps_per_print .............. 5\n", "  world_size ................... 2\n"]
    for _ in range(2):
        for rank in (1, 0):  # an MoE model's forward breakdown first, a part of fwd
            text.append(f"[2026-12-05 09:30:04,000] [INFO] [logging.py:107:log_dist] [Rank {rank}]"
                        " time (ms) | fwd: 10.00 (fwd_moe: 4.00, 1st_a2a: 1.00, 2nd_a2a: 1.00, "
                        "top_k: 0.50)\n")  # fmt: skip
            text.append(f"worker-0: [Rank {rank}] time (ms) | fwd: {10 + rank}.00 | bwd: 20.00 | "
                        "bwd_inner: 18.00 | bwd_allreduce: 2.00 | step: 3.00\n")  # fmt: skip
            text.append(f"[Rank {rank}] time (ms) | pipe_send_output: 1.50 | pipe_send_grad: "
                        "0.50 | pipe_recv_input: 4.00 | pipe_recv_grad: 6.00\n")  # fmt: skip
    log = parse_lines(text, "pipe.log")
    assert [(st.rank, st.step) for st in log.steps] == [(0, 5), (0, 10), (1, 5), (1, 10)]
    assert spent(log.steps[2].phases) == pytest.approx(
        {"F": 0.011, "B": 0.018, "dp": 0.002, "optim": 0.003, "pp_send": 0.002, "pp_recv": 0.010}
    )
    assert log.hints == {}  # world_size is the data-parallel size: not the world under a pipeline
    assert any("total of the 5 steps" in n for n in log.notes)


@pytest.mark.parametrize("bad, why", [
    ("[Rank 0] time (ms) | fwd: 82.05 | bwd: 17", "line 4 is a DeepSpeed timer line whose"),
    ("[Rank 0] time (ms) | fwd: nan | bwd: 1.00", "line 4 is a DeepSpeed timer line whose"),
])  # fmt: skip
def test_a_malformed_timer_line_is_refused_naming_file_and_line(bad, why, tmp_path, capsys):
    lines = LOG.read_text().splitlines()
    text = "\n".join([*lines[10:13], bad, *lines[13:]]) + "\n"
    with pytest.raises(TraceError, match="^ds.log: " + why.replace("(", r"\(")):
        parse_lines(text.splitlines(), "ds.log")
    path = tmp_path / "ds.log"
    path.write_text(text)
    db = tmp_path / "db.sqlite3"
    assert main([str(path), "--run", "bad", "--db", str(db)]) == 2
    assert f"{path}: line 4 is a DeepSpeed timer line" in capsys.readouterr().err
    assert stored(db, "bad") == []  # nothing of a refused import is stored


def test_a_log_without_the_global_timers_is_refused():
    micro_only = [ln for ln in LOG.read_text().splitlines() if "microstep" in ln]
    with pytest.raises(TraceError, match="^m.log: no DeepSpeed 'time .ms. | fwd"):
        parse_lines(micro_only, "m.log")


def test_deepspeed_lines_are_told_from_megatrons(tmp_path):
    ds = tmp_path / "ds.out"
    # A Megatron-DeepSpeed log: Megatron's iteration lines and DeepSpeed's timers.
    ds.write_text(" iteration        1/     100 | elapsed time per iteration (ms): 280.1 |\n"
                  + LOG.read_text())  # fmt: skip
    assert file_format(ds) == DEEPSPEED
    mega = FIXTURES / "traces" / "megatron" / "megatron_dp2_tp2_pp2.log"
    assert file_format(mega) == MEGATRON


def test_the_log_lands_on_runs_name_by_the_cli_and_the_upload(tmp_path, capsys):
    db = tmp_path / "db.sqlite3"
    assert main([str(LOG), "--run", "ds", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "deepspeed log(s) 1, 1 rank(s), 3 rank-step record(s); layout dp=4 tp=1 pp=1" in out
    assert "phases: B 3, F 3, bwd (not stored: host time) 3, dp 3, optim 3" in out
    assert "ranks absent from the log(s): 3" in out
    records = stored(db, "ds")
    assert [(r["rank"], r["step"]) for r in records] == [(0, 0), (0, 1), (0, 2)]
    assert [e["kind"] for e in records[0]["events"]] == ["F", "B", "dp", "optim"]
    with served(db) as client:
        assert client.get("/api/runs/ds/analysis?step=0").status_code == 200
        page = client.get("/runs/ds")
        assert page.status_code == 200 and "ds" in page.text
    # Uploaded on /runs: the same records.
    s = Settings(db=tmp_path / "live.sqlite3", ingest_token=TOKEN)
    with TestClient(create_app(s)) as c:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        params = {"run": "ds", "name": LOG.name}
        res = c.post("/api/runs/import", params=params, content=LOG.read_bytes(), headers=auth)
        assert res.status_code == 200, res.text
        assert (res.json()["records"], res.json()["url"]) == (3, "/runs/ds")
    assert stored(tmp_path / "live.sqlite3", "ds") == records
