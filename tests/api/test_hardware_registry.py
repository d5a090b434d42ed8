"""A hardware profile loaded at startup works wherever a built-in preset does: the scenario API,
every page's hardware choice, the comparison, the sweep, the planner and the trace."""

import json
import re
import warnings
from urllib.parse import urlencode

import pytest
from page_html import error_beside, page_data

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

from app.core.inputs.hardware import HARDWARE
from app.main import create_app
from app.settings import Settings

GIB = 1 << 30
# Figures no preset has, so a number in an answer can only have come from the profile; four
# GPUs a node makes the planner keep TP at 4 or below and changes the layout's node count.
PROFILE = {
    "name": "lab-x",
    "peak_tflops": 700.0,
    "hbm_gib": 96.0,
    "hbm_tbps": 2.5,
    "intra_gbps": 200.0,
    "inter_gbps": 12.5,
    "gpus_per_node": 4,
    "nics_per_node": 2,
    "source": "our lab: 4-GPU nodes, 2 NICs each",
}
NAME = PROFILE["name"]
PLAN = {"model": "llama3-8b", "gpus": "16", "global_batch": "64"}


def _settings(tmp_path, profiles) -> Settings:
    return Settings(db=tmp_path / "m.sqlite3", ingest_token="t" * 32, hardware_profiles=profiles)


@pytest.fixture
def lab(tmp_path):
    path = tmp_path / "lab-x.json"
    path.write_text(json.dumps(PROFILE))
    with TestClient(create_app(_settings(tmp_path, [path]))) as c:
        yield c


def _hardware_options(html: str) -> list[str]:
    """The values of the page's hardware <select>, in order."""
    select = re.search(r'<select name="hardware">(.*?)</select>', html, re.S)
    assert select, "the page has no hardware select"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def _selected_hardware(html: str) -> str:
    select = re.search(r'<select name="hardware">(.*?)</select>', html, re.S).group(1)
    return re.search(r'<option value="([^"]*)" selected', select).group(1)


def test_a_profile_is_a_scenario_hardware_with_its_own_figures(lab):
    r = lab.get(f"/api/scenario?hardware={NAME}")
    assert r.status_code == 200, r.text
    body = r.json()
    hw = body["hardware"]
    for key in ("name", "peak_tflops", "hbm_gib", "hbm_tbps", "intra_gbps", "inter_gbps",
                "gpus_per_node", "nics_per_node", "source"):  # fmt: skip
        assert hw[key] == PROFILE[key], key
    # The figures reach the cost model, not just the echo: nodes of 4, 96 GiB of capacity.
    assert body["layout"]["gpus_per_node"] == 4 and body["layout"]["nodes"] == 2
    assert body["memory"]["capacity_bytes"] == 96 * GIB
    preset = lab.get("/api/scenario?hardware=h100-sxm").json()
    assert body["step_time_s"] != preset["step_time_s"]


def test_the_cached_answer_and_the_trace_use_the_profile_too(lab):
    first = lab.get(f"/api/scenario?hardware={NAME}&pp=4")
    again = lab.get(f"/api/scenario?pp=4&hardware={NAME}")
    assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
    trace = lab.get(f"/api/trace?hardware={NAME}&pp=4")
    assert trace.status_code == 200, trace.text
    assert trace.json()["traceEvents"]


@pytest.mark.parametrize("path", ["/", "/flow"])
def test_the_scenario_pages_render_with_the_profile_and_list_it(lab, path):
    page = lab.get(f"{path}?hardware={NAME}")
    assert page.status_code == 200, page.text
    data = page_data(page.text)
    assert data["errors"] == {}
    assert data["model"]["hardware"]["peak_tflops"] == PROFILE["peak_tflops"]
    # Built-ins first, in their own order, then the loaded profile.
    assert _hardware_options(page.text) == [*HARDWARE, NAME]
    assert _selected_hardware(page.text) == NAME


def test_the_compare_page_and_api_take_the_profile(lab):
    base = {"model": "megatron-22b", "tp": "4", "pp": "4", "microbatches": "16"}
    page = lab.get("/compare?" + urlencode({"preset": "factory", **base, "hardware": NAME}))
    assert page.status_code == 200, page.text
    data = page_data(page.text)
    assert data["errors"] == {}
    assert data["options"]["hardware"] == [*HARDWARE, NAME]
    assert _hardware_options(page.text) == [*HARDWARE, NAME]
    members = data["comparison"]["members"]
    assert all(m["valid"] and m["scenario"]["hardware"] == NAME for m in members)
    assert {m["memory"]["capacity_bytes"] for m in members} == {96 * GIB}
    pair = [("s", f"hardware={NAME}&pp=2"), ("s", "hardware=h100-sxm&pp=2")]
    api = lab.get("/api/compare?" + urlencode(pair))
    assert api.status_code == 200, api.text
    ours, preset = api.json()["members"]
    assert (ours["layout"]["gpus_per_node"], preset["layout"]["gpus_per_node"]) == (4, 8)


def test_the_trend_page_and_sweep_take_the_profile(lab):
    page = lab.get(f"/trend?hardware={NAME}&pp=4&stop=4")
    assert page.status_code == 200, page.text
    data = page_data(page.text)
    assert data["errors"] == {}
    assert _hardware_options(page.text) == [*HARDWARE, NAME]
    assert data["sweep"]["base"]["hardware"] == NAME
    api = lab.get(f"/api/sweep?hardware={NAME}&pp=4&stop=4&series=none").json()
    points = api["lines"][0]["points"]
    assert points and all(p["valid"] for p in points)
    assert {p["capacity_bytes"] for p in points} == {96 * GIB}


def test_the_planner_api_and_page_take_the_profile(lab):
    r = lab.get("/api/plan?" + urlencode({**PLAN, "hardware": NAME}))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["hardware"] == NAME and body["results"]
    # TP stays inside the profile's 4-GPU node; every row reopens as the same scenario.
    assert max(row["tp"] for row in body["results"]) <= 4
    row = body["results"][0]
    again = lab.get("/api/scenario", params=row["query"]).json()
    assert again["tokens_per_s"] == pytest.approx(row["tokens_per_s"])
    page = lab.get("/plan?" + urlencode({**PLAN, "hardware": NAME}))
    assert page.status_code == 200, page.text
    assert page_data(page.text)["plan"]["results"] == body["results"]
    assert _hardware_options(page.text) == [*HARDWARE, NAME]
    assert _selected_hardware(page.text) == NAME


@pytest.mark.parametrize("url", ["/api/scenario?hardware=nope", "/api/plan?hardware=nope"])
def test_an_unknown_name_is_a_422_listing_the_profile(lab, url):
    r = lab.get(url)
    assert r.status_code == 422
    (detail,) = r.json()["detail"]
    assert detail["loc"][-1] == "hardware"
    assert detail["msg"].endswith("one of: " + ", ".join([*HARDWARE, NAME]))


def test_an_unknown_name_on_a_page_is_shown_beside_the_hardware_control(lab):
    page = lab.get("/?hardware=nope")
    assert page.status_code == 422
    assert NAME in error_beside(page.text, "hardware")


def test_without_profiles_only_the_presets_are_offered(client):
    r = client.get(f"/api/scenario?hardware={NAME}")
    assert r.status_code == 422
    assert r.json()["detail"][0]["msg"].endswith("one of: " + ", ".join(HARDWARE))
    assert client.get(f"/api/plan?hardware={NAME}").status_code == 422
    for path in ("/", "/compare", "/trend", "/plan"):
        assert _hardware_options(client.get(path).text) == list(HARDWARE), path
