"""A stored run with context (cp) and expert (ep) parallelism, served (issue 25): the step's
analysis names CP and EP among the bubble's causes and the shares, lays the rank grid out by
(dp, cp, tp), and /metrics gives their shares; a 3D run's answers name neither."""

from __future__ import annotations

import pytest
from cp_ep_support import cp_ep_info, cp_ep_records, slow_cp_records
from test_metrics import by_run, make_client, scrape, seed

from app.core.fidelity.measured import breakdown


@pytest.fixture
def client(tmp_path):
    with make_client(tmp_path) as c:
        info = cp_ep_info("cpep", dp=2, tp=1, pp=2, cp=2, ep=2)
        ops = [("hello", (info, 0, 0, 1.0))]
        for step in range(3):
            ops += [("record", (r, 1.0)) for r in cp_ep_records(info, step)]
        c.app.state.live.store.transaction(ops)
        seed(c, "plain", at=1.0, steps=3, dp=2, tp=2, pp=2, m=4)
        yield c


def test_the_analysis_of_a_cp_ep_run_names_cp_and_ep(client):
    a = client.get("/api/runs/cpep/analysis?step=2").json()
    assert a["bubble"]["causes"] == ["schedule", "pp_peers", "tp", "cp", "ep", "dp", "host"]
    # Each rank: two microbatches of a 2 ms cp exchange and a 3 ms ep all-to-all.
    for r in a["bubble"]["per_rank"]:
        assert (r["cp"], r["ep"]) == pytest.approx((0.004, 0.006))
    mean = a["shares"]["mean"]
    assert (mean["cp_s"], mean["ep_s"]) == pytest.approx((0.004, 0.006))
    parts = ("compute_s", "tp_s", "cp_s", "ep_s", "dp_s", "pp_wait_s", "host_s")
    assert sum(mean[k] for k in parts) == pytest.approx(mean["step_time_s"])
    # 8 ranks = dp 2 x pp 2 x cp 2: one column per (dp, cp) pair, each rank once.
    assert a["heatmap"]["x"] == ["dp0·cp0·tp0", "dp0·cp1·tp0", "dp1·cp0·tp0", "dp1·cp1·tp0"]
    assert sorted(r for row in a["heatmap"]["ranks"] for r in row) == list(range(8))
    assert all(v is not None for row in a["heatmap"]["metrics"]["comm_frac"] for v in row)
    assert [(r["dp"], r["pp"], r["cp"]) for r in a["rows"]][:3] == [(0, 0, 0), (0, 0, 1), (0, 1, 0)]
    kinds = {e["kind"] for e in a["measured"]["events"]}
    assert {"cp", "ep"} <= kinds
    # The a-priori prediction prices the run's own mesh, cp among its factors.
    assert "error" not in a["a_priori"] and a["a_priori"]["query"]["cp"] == "2"


def test_a_3d_runs_analysis_names_neither(client):
    a = client.get("/api/runs/plain/analysis?step=2").json()
    assert a["bubble"]["causes"] == ["schedule", "pp_peers", "tp", "dp", "host"]
    assert "cp_s" not in a["shares"]["mean"] and "cp" not in a["rows"][0]
    assert a["heatmap"]["x"][:2] == ["dp0·tp0", "dp0·tp1"]
    assert all("cp" not in r and "ep" not in r for r in a["bubble"]["per_rank"])


def test_metrics_give_cp_and_ep_shares_only_for_the_run_that_has_them(client):
    samples = scrape(client)
    newest = [breakdown(r) for r in cp_ep_records(cp_ep_info("cpep", 2, 1, 2, 2, 2), 2)]
    total = sum(b.step_time_s for b in newest)
    cp = by_run(samples, "meshscope_run_cp_share", "cpep")
    assert cp == pytest.approx(sum(b.cp_s for b in newest) / total)
    ep = by_run(samples, "meshscope_run_ep_share", "cpep")
    assert ep == pytest.approx(sum(b.ep_s for b in newest) / total)
    names = {name for name, labels in samples if ("run", "plain") in labels}
    assert "meshscope_run_tp_share" in names and "meshscope_run_cp_share" not in names


def test_a_3d_only_scrape_has_no_cp_or_ep_family(tmp_path):
    with make_client(tmp_path) as c:
        seed(c, "plain", at=1.0, steps=2, dp=2, tp=2, pp=2, m=4)
        text = c.get("/metrics").text
    assert "meshscope_run_tp_share" in text and "cp_share" not in text and "ep_share" not in text


def test_a_slow_cp_group_is_named_as_a_link_not_its_ranks_compute():
    """The CP exchange sits inside the forward: a group whose exchange takes 5x as long is a
    slow CP link, its members' compute (F/B less the exchanges) normal."""
    from app.core.inputs.protocol import run_layout
    from app.core.traces.stragglers import find_stragglers

    info = cp_ep_info("slow-cp", dp=2, tp=1, pp=2, cp=2, ep=2)
    layout = run_layout(info)
    slow = set(layout.group("cp", 0))
    recs = [r for step in range(3) for r in slow_cp_records(info, step, slow)]
    (found,) = find_stragglers(recs, layout)
    assert (found.cause, found.phase, found.ranks) == ("link", "cp", tuple(sorted(slow)))
