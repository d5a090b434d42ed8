"""The overview and flow views in real Chromium: what a teacher and a learner rely on."""

import re
from urllib.parse import parse_qs, urlparse

import pytest

from app import i18n
from app.core.layout.topology import Layout, seed_active_ranks
from app.core.views import flow as core_flow
from tests.browser.conftest import api, open_view, shot, url_of

pytestmark = pytest.mark.browser


def click_rank(page, canvas_id, rank):
    cx, cy = page.evaluate(
        "([id, r]) => document.getElementById(id).meshscopeGrid.cellCentre(r)", [canvas_id, rank]
    )
    box = page.locator(f"#{canvas_id}").bounding_box()
    page.mouse.click(box["x"] + cx, box["y"] + cy)


def canvas_data(page, canvas_id):
    return page.eval_on_selector(f"#{canvas_id}", "c => ({...c.dataset})")


def ints(csv):
    return [int(x) for x in csv.split(",")] if csv else []


def query_of(page):
    return {k: v[0] for k, v in parse_qs(urlparse(url_of(page)).query).items()}


def test_overview_loads_draws_and_shows_every_card(page, base_url):
    assert open_view(page, f"{base_url}/?f_time=1", "overview").status == 200
    assert canvas_data(page, "grid")["world"] == "8"
    assert page.locator("#card-world .big").inner_text() == "2 × 2 × 2 = 8"
    assert page.locator("#card-bubble .big").inner_text() == "20.0%"
    assert page.locator("math").count() == 6
    # One bar per part some stage holds (weights, grads, fp32 grad buffer, optimizer,
    # activations, transients, floor ...: the legend lists them), per stage.
    parts = page.locator("#card-memory .legend .item").count()
    assert parts >= 4 and page.locator("#memory-chart svg rect").count() == parts * 2
    shot(page, "overview")


def test_flow_loads_draws_every_event_and_exports_png_and_trace(page, base_url):
    query = "pp=4&microbatches=8&f_time=1&p2p_time=0.2"
    open_view(page, f"{base_url}/flow?{query}", "flow")
    model = api(base_url, "/api/scenario", query)
    drawn = len(model["timeline"]["events"]) + len(model["timeline"]["tail"])
    assert page.locator("#timeline").get_attribute("data-events") == str(drawn)
    page.locator("#cursor").fill("6")
    assert int(page.locator("#timeline").get_attribute("data-sends-now")) > 0
    shot(page, "flow")
    with page.expect_download() as dl:
        page.click("#export-png")
    with open(dl.value.path(), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    trace = page.request.get(base_url + page.get_attribute("#export-trace", "href"))
    assert trace.status == 200
    assert {e["ph"] for e in trace.json()["traceEvents"]} >= {"M", "X", "s", "f"}


def test_changing_a_control_changes_the_url_and_the_drawing(page, base_url):
    open_view(page, f"{base_url}/", "overview")
    page.locator('#controls [name="dp"]').fill("4")
    page.wait_for_function("document.getElementById('grid').dataset.world === '16'")
    assert query_of(page)["dp"] == "4"
    page.select_option('#controls [name="order"]', "tp-dp-pp")
    page.wait_for_selector('#orders tr.current[data-order="tp-dp-pp"]')
    assert query_of(page)["order"] == "tp-dp-pp"


def test_a_checkbox_whose_default_is_on_can_be_turned_off_and_on_again(page, base_url):
    # Sequence parallelism is on by default at tp > 1: unticking it must reach the URL (it
    # once sent "", which the URL drops as a default, so the page stayed on).
    open_view(page, f"{base_url}/", "overview")
    box = page.locator('#controls [name="sequence_parallel"]')
    box.evaluate("el => { el.closest('details').open = true; }")  # the "more" fields
    assert box.is_checked()
    box.uncheck()
    page.wait_for_function("location.search.includes('sequence_parallel=false')")
    page.wait_for_selector("body[data-ready=overview][data-state=ok]")
    box.check()
    page.wait_for_function("!location.search.includes('sequence_parallel')")


def test_a_copied_link_reopens_the_same_scenario_rank_and_cursor(page, context, base_url):
    open_view(page, f"{base_url}/flow?dp=2&tp=2&pp=4&microbatches=8&f_time=1", "flow")
    click_rank(page, "mini-grid", 5)
    for _ in range(4):
        page.click("#step-forward")
    page.click("#copy-link")
    page.wait_for_selector("#copy-status[data-url]")
    link = page.evaluate("navigator.clipboard.readText()")
    before = (page.inner_text("#step-no"), page.get_attribute("body", "data-t"))
    again = context.new_page()
    open_view(again, link, "flow")
    assert again.input_value('#controls [name="pp"]') == "4"
    assert again.input_value('#controls [name="microbatches"]') == "8"
    assert canvas_data(again, "mini-grid")["selected"] == "5"
    assert (again.inner_text("#step-no"), again.get_attribute("body", "data-t")) == before
    assert again.get_attribute("#timeline", "data-rows") == "2"  # rank 5 holds stage 2


def test_a_copied_overview_link_reopens_the_selected_rank(page, context, base_url):
    open_view(page, f"{base_url}/?dp=4&tp=2&pp=2&color=dp", "overview")
    click_rank(page, "grid", 6)
    again = context.new_page()
    open_view(again, url_of(page), "overview")
    assert canvas_data(again, "grid")["selected"] == "6"
    assert again.input_value("#color-by") == "dp"


@pytest.mark.parametrize(
    "query",
    [
        "dp=2&tp=2&pp=2",
        "dp=4&tp=2&pp=4&gpus_per_node=4&order=tp-dp-pp",
        "dp=2&tp=4&pp=2&order=dp-pp-tp",
    ],
)
def test_clicking_a_rank_highlights_exactly_its_groups(page, base_url, query):
    open_view(page, f"{base_url}/?{query}", "overview")
    layout = api(base_url, "/api/scenario", query)["layout"]
    rank = layout["world_size"] - 3
    click_rank(page, "grid", rank)
    data = canvas_data(page, "grid")
    assert data["selected"] == str(rank)
    for axis in ("tp", "pp", "dp"):
        (group,) = [g for g in layout["groups"][axis] if rank in g]
        assert ints(data[axis]) == group, axis
        nodes = {layout["ranks"][r]["node"] for r in group}
        badge = page.locator(f'.group-row[data-axis="{axis}"] .badge')
        assert ("cross" in badge.get_attribute("class")) == (len(nodes) > 1)
    shot(page, "overview-selected")


def test_the_naive_animation_lights_the_articles_active_gpus_at_every_step(page, base_url):
    open_view(page, f"{base_url}/flow?schedule=naive&f_time=1&speed=16", "flow")
    demo = seed_active_ranks(Layout(dp=2, tp=2, pp=2), 4)
    steps = len(api(base_url, "/api/flow", "schedule=naive&f_time=1")["frames"]["times"]) - 1
    page.click("#play")
    page.wait_for_function("Number(document.getElementById('step-no').textContent) >= 2")
    page.wait_for_selector("body[data-playing='0']")  # ran to the end and stopped itself
    assert page.inner_text("#step-no") == str(steps)  # the pipeline's m + p - 1, then the tail
    for t, active in enumerate(demo):
        page.locator("#cursor").fill(str(t))
        assert ints(canvas_data(page, "mini-grid")["active"]) == active, t


SCHEDULES = [
    {"schedule": "gpipe", "b_time": "2"},
    {"schedule": "1f1b", "pp": "4", "microbatches": "8", "p2p_time": "0.1"},
    {"schedule": "interleaved", "pp": "2", "virtual_stages": "2", "microbatches": "4"},
    {"schedule": "zb-h1", "virtual_stages": "1", "pp": "4", "microbatches": "6", "w_time": "0.5"},
]


def test_every_schedule_animates_with_active_ranks_the_core_computes(page, base_url, watch):
    # Switched through the controls on one page; halfway states may be invalid (a 422).
    watch.allowed_errors.append("status of 422")
    open_view(page, f"{base_url}/flow?f_time=1&speed=16", "flow")
    for case in SCHEDULES:
        for name, value in case.items():
            if name == "schedule":
                page.select_option('#controls [name="schedule"]', value)
            else:
                page.locator(f'#controls [name="{name}"]').fill(value)
                page.locator(f'#controls [name="{name}"]').dispatch_event("change")
        view_keys = {"speed", "t", "rank", "lang", "color"}
        query = "&".join(f"{k}={v}" for k, v in query_of(page).items() if k not in view_keys)
        model = api(base_url, "/api/scenario", query)
        times = api(base_url, "/api/flow", query)["frames"]["times"]
        drawn = len(model["timeline"]["events"]) + len(model["timeline"]["tail"])
        page.wait_for_function(
            "([events, steps]) => document.getElementById('timeline').dataset.events == events"
            " && document.getElementById('cursor').max == steps",
            arg=[drawn, len(times) - 1],
        )
        assert query_of(page).get("schedule", "1f1b") == case["schedule"]
        page.click("#play")
        page.wait_for_function("Number(document.getElementById('step-no').textContent) >= 3")
        page.click("#play")
        for k in range(0, len(times), max(1, len(times) // 5)):
            page.locator("#cursor").fill(str(k))
            layout, events = model["layout"], model["timeline"]["events"]
            expected = core_flow.active_ranks_at(layout, events, times[k])
            assert ints(canvas_data(page, "mini-grid")["active"]) == expected, (case, k)


def test_zh_toggle_switches_all_visible_text(page, base_url):
    en, zh = i18n.strings("en"), i18n.strings("zh")
    # Labels that read the same in both (acronyms, numbers) are not evidence either way.
    # Nor is a name the zh text keeps inside its translation ("Hopper" in "Hopper 架构").
    english = {
        v for k, v in en.items() if v != zh[k] and v not in zh[k] and re.search(r"[a-z]{3}", v)
    }
    for path, view in (("/", "overview"), ("/flow", "flow")):
        open_view(page, f"{base_url}{path}?f_time=1", view)
        page.click("#lang-toggle")
        page.wait_for_selector(f"body[data-lang=zh][data-ready={view}]")
        page.wait_for_selector("#memory-chart svg, #timeline .main-svg")
        # The formulas' symbols (MathML: r_bubble, t_F) are notation, not English prose.
        text = page.evaluate(
            """() => { const body = document.body.cloneNode(true);
                       body.querySelectorAll("math").forEach((m) => m.remove());
                       document.documentElement.append(body);
                       const text = body.innerText; body.remove(); return text; }"""
        )
        left = sorted(s for s in english if re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text))
        assert left == [], f"English left on the zh {view} page"
        assert "lang=zh" in url_of(page)
        shot(page, f"{view}-zh")


def test_cards_draw_the_cores_costs_with_oom_in_red(page, base_url):
    query = "pp=4&hbm_gib=20"
    model = api(base_url, "/api/scenario", query)
    mem = model["memory"]
    over = [s for s in mem["per_stage"] if s["total_bytes"] > mem["capacity_bytes"]]
    assert over, "the scenario is chosen to run out of memory"
    open_view(page, f"{base_url}/?{query}", "overview")
    assert page.locator("#card-memory .oom").is_visible()
    assert page.locator("#memory-chart text.oom-mark", has_text="OOM").count() == len(over)
    assert page.locator("#card-comm table tr").count() == 3
    assert page.locator("#card-advice li").count() == len(model["advice"])
    assert f"{model['mfu'] * 100:.1f}%" in page.inner_text("#card-perf")
    shot(page, "overview-oom")


def test_the_steps_tail_and_tp_pulses_are_drawn(page, base_url):
    query = "pp=4&f_time=1"
    tl = api(base_url, "/api/scenario", query)["timeline"]
    open_view(page, f"{base_url}/flow?{query}", "flow")
    assert page.get_attribute("#timeline", "data-events") == str(
        len(tl["events"]) + len(tl["tail"])
    )
    page.locator("#cursor").fill(page.get_attribute("#cursor", "max"))
    page.click("#step-back")
    assert canvas_data(page, "mini-grid")["tail"] != ""
    page.locator("#cursor").fill("1")
    data = canvas_data(page, "mini-grid")
    assert data["pulse"] and set(ints(data["pulse"])) <= set(ints(data["active"]))


def test_the_page_degrades_cleanly_without_cost_keys(page, bare_url):
    open_view(page, f"{bare_url}/", "overview")
    assert page.locator("#cards .na").count() == 4  # memory, comm, perf, advice
    assert page.locator("#card-world .big").inner_text() == "2 × 2 × 2 = 8"
    open_view(page, f"{bare_url}/flow?f_time=1", "flow")
    assert int(page.get_attribute("#timeline", "data-events")) > 0


def test_bad_input_renders_the_page_with_the_reason_beside_the_control(page, base_url, watch):
    watch.allowed_errors.append("status of 422")
    res = page.goto(f"{base_url}/?dp=0&tp=2")
    assert res.status == 422
    message = page.locator('output[data-err-for="dp"]')
    assert message.is_visible() and "greater than or equal to 1" in message.inner_text()
    assert page.locator("#error-banner").is_visible()
    shot(page, "overview-error")
    page.locator('#controls [name="dp"]').fill("2")
    page.wait_for_selector("body[data-ready=overview][data-state=ok]")
    assert message.inner_text() == "" and not page.locator("#error-banner").is_visible()
    page.locator('#controls [name="microbatches"]').fill("0")
    page.wait_for_function(
        "document.querySelector('output[data-err-for=microbatches]').textContent !== ''"
    )


def test_16384_ranks_aggregate_by_node_and_zoom_in(page, base_url):
    open_view(page, f"{base_url}/?dp=256&tp=8&pp=8", "overview")
    data = canvas_data(page, "grid")
    assert (data["world"], data["aggregated"]) == ("16384", "1")
    assert page.locator("#grid-aggregated").is_visible()
    click_rank(page, "grid", 8 * 100)  # a click on an aggregated node opens it
    assert canvas_data(page, "grid")["aggregated"] == "0"
    click_rank(page, "grid", 8 * 100 + 3)
    assert canvas_data(page, "grid")["selected"] == str(803)
    shot(page, "overview-16384")


def test_navigation_keeps_the_scenario_and_no_request_leaves_the_server(page, base_url, watch):
    open_view(page, f"{base_url}/?dp=4&tp=1&pp=4&rank=5", "overview")
    page.locator('#controls [name="microbatches"]').fill("8")
    page.wait_for_function("location.search.includes('microbatches=8')")
    page.click('nav a[data-nav="flow"]')
    page.wait_for_selector("body[data-ready=flow]")
    assert query_of(page) == {"dp": "4", "tp": "1", "pp": "4", "rank": "5", "microbatches": "8"}
    assert canvas_data(page, "mini-grid")["selected"] == "5"
    # The context fixture also checks every request of every test; here, that Plotly came
    # from this server's versioned URL and nothing else was asked of anyone else.
    assert any(re.search(r"/vendor/plotly-[\d.]+\.min\.js$", u) for u in watch.requests)
    assert all(u.startswith(base_url) for u in watch.requests)
