"""The trend view and the planner page in real Chromium: share links, redraws, clicks, zh."""

from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from app import i18n
from app.core.schedules import FORWARD_ONLY, ScheduleName
from tests.browser.conftest import api, open_view, shot, url_of

pytestmark = pytest.mark.browser

QUERY = "pp=4&f_time=1&knob=microbatches&start=1&stop=12&series=schedule"
LINES = sum(s not in FORWARD_ONLY for s in ScheduleName)  # one per training schedule


def query_of(url):
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def charts(page):
    return page.eval_on_selector("#trend-charts", "c => ({...c.dataset})")


def point_xy(page, chart, trace_name, x):
    """Page coordinates of one drawn point, from Plotly's own axes."""
    return page.evaluate(
        """([id, name, x]) => {
            const gd = document.getElementById(id);
            const tr = gd._fullData.find((t) => t.name === name);
            const y = tr.y[tr.x.indexOf(x)];
            const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
            const box = gd.getBoundingClientRect();
            return [box.left + xa._offset + xa.l2p(xa.d2l(x)), box.top + ya._offset + ya.d2p(y)];
        }""",
        [chart, trace_name, x],
    )


def test_trend_loads_draws_every_point_and_marks_invalid_ones(page, base_url):
    assert open_view(page, f"{base_url}/trend?{QUERY}", "trend").status == 200
    data = api(base_url, "/api/sweep", QUERY)
    drawn = charts(page)
    assert drawn["knob"] == "microbatches"
    assert drawn["count"] == str(data["count"]) == str(LINES * 12)
    assert drawn["invalid"] == str(data["invalid"]) != "0"  # interleaved needs m % 4 == 0
    # Each chart: one trace per line (per metric) plus the invalid markers, none dropped.
    bubble = page.evaluate("document.getElementById('chart-bubble').data")
    assert len(bubble) == LINES * 2 + 1
    assert len(bubble[-1]["x"]) == data["invalid"]
    assert page.locator("#chart-memory .shapelayer path").count() >= 2  # OOM band + line
    shot(page, "trend")


def test_the_url_round_trips_into_a_new_page(page, context, base_url):
    open_view(page, f"{base_url}/trend?dp=2", "trend")
    page.select_option('#sweep-form [name="knob"]', "pp")
    page.wait_for_function("document.getElementById('trend-charts').dataset.knob === 'pp'")
    page.fill('#sweep-form [name="values"]', "1,2,4,8")
    page.press('#sweep-form [name="values"]', "Tab")
    page.wait_for_function(
        f"document.getElementById('trend-charts').dataset.count === '{4 * LINES}'"
    )
    page.select_option('#sweep-form [name="series"]', "none")
    page.wait_for_function("document.getElementById('trend-charts').dataset.lines === '1'")
    state = query_of(url_of(page))
    assert state == {"dp": "2", "knob": "pp", "values": "1,2,4,8", "series": "none"}
    again = context.new_page()
    open_view(again, url_of(page), "trend")
    assert charts(again) == charts(page)
    assert again.input_value('#sweep-form [name="knob"]') == "pp"
    assert again.input_value('#sweep-form [name="values"]') == "1,2,4,8"
    assert again.input_value('#sweep-form [name="series"]') == "none"


def test_changing_the_base_scenario_redraws_the_sweep(page, base_url):
    open_view(page, f"{base_url}/trend?series=none&f_time=1", "trend")
    before = page.evaluate("document.getElementById('chart-bubble').data[0].y[0]")
    page.locator('#controls [name="pp"]').fill("8")
    page.wait_for_function(f"document.getElementById('chart-bubble').data[0].y[0] !== {before}")
    assert query_of(url_of(page))["pp"] == "8"
    # (p-1)/(m+p-1) at m = 1 for p = 8
    assert page.evaluate("document.getElementById('chart-bubble').data[0].y[0]") == 7 / 8


@pytest.mark.parametrize("view", ["overview", "flow"])
def test_clicking_a_point_opens_that_exact_scenario(page, base_url, view):
    query = f"{QUERY}&open={view}"
    open_view(page, f"{base_url}/trend?{query}", "trend")
    data = api(base_url, "/api/sweep", QUERY)
    # GPipe holds every micro-batch in flight: at m = 12 its memory point is the top one
    # (looped-bfs holds as many, so its point lies on the same spot: either may be clicked).
    x, y = point_xy(page, "chart-memory", "gpipe", 12)
    page.mouse.move(x, y)
    page.wait_for_selector("#point-panel a[data-open=flow]")
    with page.expect_navigation():
        page.mouse.click(x, y)
    page.wait_for_selector(f"body[data-ready={view}]")
    assert urlparse(url_of(page)).path == ("/flow" if view == "flow" else "/")
    opened = query_of(url_of(page))
    assert opened["schedule"] in ("gpipe", "looped-bfs")
    line = next(li for li in data["lines"] if li["key"] == opened["schedule"])
    assert opened == next(p for p in line["points"] if p["x"] == 12)["query"]


def test_hovering_an_invalid_point_tells_why(page, base_url):
    open_view(page, f"{base_url}/trend?{QUERY}", "trend")
    x, y = page.evaluate(
        """() => {
            const gd = document.getElementById('chart-bubble');
            const tr = gd._fullData.at(-1);
            const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis2;  // the strip
            const box = gd.getBoundingClientRect();
            const top = box.top + ya._offset + ya.d2p(tr.y[0]);
            return [box.left + xa._offset + xa.d2p(tr.x[0]), top];
        }"""
    )
    page.mouse.move(x, y)
    page.wait_for_selector("#point-panel .oom")
    assert "microbatches" in page.inner_text("#point-panel")


def test_a_bad_sweep_shows_the_reason_beside_its_control(page, base_url, watch):
    watch.allowed_errors.append("status of 422")
    res = page.goto(f"{base_url}/trend?knob=microbatches&stop=1000", wait_until="domcontentloaded")
    assert res.status == 422
    assert page.inner_text('output[data-err-for="stop"]')
    page.fill('#sweep-form [name="stop"]', "8")
    page.press('#sweep-form [name="stop"]', "Tab")
    page.wait_for_selector("body[data-ready=trend]")
    assert page.inner_text('output[data-err-for="stop"]') == ""


def test_the_zh_toggle_switches_the_trend_page(page, base_url):
    open_view(page, f"{base_url}/trend?knob=pp&values=1,2,4", "trend")
    zh = i18n.strings("zh")
    with page.expect_navigation():
        page.click("#lang-toggle")
    page.wait_for_selector("body[data-ready=trend]")
    assert query_of(url_of(page))["lang"] == "zh"
    assert query_of(url_of(page))["knob"] == "pp"
    assert zh["trend.chart.memory"] in page.inner_text("#trend-charts")
    assert zh["trend.title"] in page.inner_text("#sweep-card")
    shot(page, "trend_zh")


def test_nav_links_from_the_trend_page_carry_the_scenario_not_the_sweep(page, base_url):
    open_view(page, f"{base_url}/trend?dp=4&knob=tp&values=1,2", "trend")
    assert query_of(page.get_attribute('a[data-nav="overview"]', "href")) == {"dp": "4"}
    assert query_of(page.get_attribute('a[data-nav="api"]', "href")) == {
        "dp": "4",
        "knob": "tp",
        "values": "1,2",
    }
    open_view(page, f"{base_url}/?dp=4", "overview")
    assert page.get_attribute('a[data-nav="trend"]', "href") == "/trend?dp=4"


PLAN = {"model": "llama3-8b", "hardware": "h100-sxm", "gpus": "16", "global_batch": "64"}


def test_the_planner_rows_link_to_their_scenarios(page, base_url):
    open_view(page, f"{base_url}/plan?{urlencode(PLAN)}", "plan")
    data = api(base_url, "/api/plan", urlencode(PLAN))
    rows = page.locator("#plan-table tbody tr")
    assert rows.count() == len(data["results"]) > 0
    assert str(data["searched"]) in page.inner_text("#plan-searched")
    first = rows.nth(0).locator("a[data-open=flow]")
    assert query_of(first.get_attribute("href")) == data["results"][0]["query"]
    shot(page, "plan")
    with page.expect_navigation():
        rows.nth(1).locator("a[data-open=overview]").click()
    page.wait_for_selector("body[data-ready=overview]")
    assert query_of(url_of(page)) == data["results"][1]["query"]


def test_the_planner_form_round_trips_and_switches_to_zh(page, context, base_url):
    open_view(page, f"{base_url}/plan", "plan")
    page.fill('#plan-form [name="gpus"]', "8")
    page.fill('#plan-form [name="global_batch"]', "32")
    with page.expect_navigation():
        page.select_option('#plan-form [name="model"]', "llama3-8b")
    page.wait_for_selector("body[data-ready=plan]")
    state = query_of(url_of(page))
    assert {k: state[k] for k in ("model", "gpus", "global_batch")} == {
        "model": "llama3-8b",
        "gpus": "8",
        "global_batch": "32",
    }
    again = context.new_page()
    open_view(again, url_of(page), "plan")
    assert again.inner_text("#plan-results") == page.inner_text("#plan-results")
    with again.expect_navigation():
        again.click("#lang-toggle")
    again.wait_for_selector("body[data-ready=plan]")
    zh = i18n.strings("zh")
    assert zh["plan.results"] in again.inner_text("#plan-results")
    assert "fastest that fits" not in again.inner_text("#plan-results")
    assert query_of(url_of(again))["gpus"] == "8"
    shot(again, "plan_zh")
