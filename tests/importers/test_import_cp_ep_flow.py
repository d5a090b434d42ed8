"""An imported CP/EP run opens its scenario in the flow view on its own mesh (issue 25: "the
run opens its scenario with the measured overlay"): the analysis's ``flow_query`` carries
the run's cp, rank order, and its ep where the priced model has experts, so every rank sits
at the same (dp, pp, tp, cp, ep) there as in the run; the overview and flow pages take it.
A model with no experts (the probe's GPT) cannot place ep: the link opens the same ranks and
``flow_left_out`` names ep, which the run page says."""

from pathlib import Path

import pytest
from cp_ep_traces import write
from test_import_trace import served

from app.core.evaluate.one_scenario import layout_of
from app.core.inputs.protocol import RunInfo, run_layout
from app.core.inputs.scenario import Scenario
from app.importers.import_trace import main
from app.live.replay_link import left_out

pytestmark = pytest.mark.timeout(120)
MOE = "?model=mixtral-8x7b&dp=2&tp=2&pp=1&cp=2&ep=4&order=tp-cp-ep-dp-pp&microbatches=1"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cp_ep_flow")
    traces, db = write(folder / "traces"), folder / "db.sqlite3"
    assert main([str(traces), "--run", "dense", "--db", str(db)]) == 0
    assert main([str(traces), "--run", "moe", "--db", str(db), "--scenario", MOE]) == 0
    return db


def _opened(client, run: str) -> tuple[dict, list[str], RunInfo]:
    a = client.get(f"/api/runs/{run}/analysis").json()
    info = RunInfo.model_validate(client.get(f"/api/runs/{run}").json()["info"])
    for page in ("/flow", "/"):
        assert client.get(page, params=a["flow_query"]).status_code == 200, page
    return a["flow_query"], a["flow_left_out"], info


def _coords(layout, axes) -> list[tuple]:
    return [tuple(getattr(layout.coord(r), a) for a in axes) for r in range(layout.world_size)]


def test_a_moe_linked_runs_flow_view_is_its_mesh_cp_and_ep_included(db):
    with served(db) as client:
        query, missing, info = _opened(client, "moe")
    assert (query["cp"], query["ep"], query["order"]) == ("2", "4", info.order)
    assert missing == []
    scenario = Scenario.model_validate(query)
    shown, run = layout_of(scenario, info.gpus_per_node), run_layout(info)
    axes = ("dp", "pp", "tp", "cp", "ep")
    assert shown.world_size == run.world_size == 8
    assert _coords(shown, axes) == _coords(run, axes)
    assert query["f_time"] == "3" and query["b_time"] == "5"  # the measured F and B, in ms


def test_a_dense_models_flow_view_has_the_ranks_and_names_ep_left_out(db):
    with served(db) as client:
        query, missing, info = _opened(client, "dense")
    assert (info.cp, info.ep) == (2, 4)
    assert (query["cp"], query["order"]) == ("2", info.order) and "ep" not in query
    assert missing == ["ep"]
    shown = layout_of(Scenario.model_validate(query), info.gpus_per_node)
    axes = ("dp", "pp", "tp", "cp")
    assert _coords(shown, axes) == _coords(run_layout(info), axes)


def test_a_3d_run_leaves_nothing_out():
    info = RunInfo(run="flat", dp=2, tp=2, pp=2, order="tp-pp-dp", gpus_per_node=8,
                   schedule="1f1b", microbatches=4, virtual_stages=1, steps=3, dtype="bf16",
                   device="cuda", model={"layers": 2, "hidden": 64, "heads": 4, "vocab": 64,
                                         "seq_len": 16, "microbatch_size": 1})  # fmt: skip
    assert left_out(info, {"pp": "2"}) == [] and left_out(info, None) == []
