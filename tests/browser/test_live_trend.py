"""The live page's step-time trend, driven directly in Chromium with the race that lost
points in CI: steps arriving over the feed while an older HTTP snapshot is in flight."""

import pytest

pytestmark = pytest.mark.browser

# Runs inside the page: a Trend on a fresh div, then `script`, then what the chart shows.
HARNESS = """async (script) => {
  const { Trend } = await import("/static/js/live_charts.js");
  const div = document.createElement("div");
  document.body.append(div);
  const trend = new Trend(div);
  await new Function("trend", `return (async () => { ${script} })()`)(trend);
  await trend.queue;
  return { points: div.dataset.points, x: [...div.data[0].x], y: [...div.data[0].y] };
}"""


def _run(page, base_url: str, script: str) -> dict:
    page.goto(f"{base_url}/runs")
    return page.evaluate(HARNESS, script)


def test_steps_that_arrive_during_a_stale_snapshot_are_kept(page, base_url):
    # The page's first snapshot (404: no run yet), then steps 0..5 over the feed, with a
    # snapshot taken before steps 4 and 5 landing in the middle of them.
    got = _run(
        page,
        base_url,
        """
        await trend.reset([], 0);
        for (const s of [0, 1, 2, 3]) trend.add(s, 0.1 * (s + 1), 0);
        const stale = [0, 1, 2, 3].map((s) => ({ step: s, step_time_s: 0.1 * (s + 1),
                                                  attempt: 0 }));
        trend.add(4, 0.5, 0);
        const landing = trend.reset(stale, 0);
        trend.add(5, 0.6, 0);
        await landing;
        """,
    )
    assert got["points"] == "6"
    assert got["x"] == [0, 1, 2, 3, 4, 5]
    assert got["y"] == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])


def test_a_resume_drops_only_the_superseded_steps_of_the_dead_attempt(page, base_url):
    # Attempt 0 reached step 5; the resume from the step-3 checkpoint supersedes 4 and 5.
    # Attempt 1's step 4 arrives over the feed before the snapshot that lists steps 0..3.
    got = _run(
        page,
        base_url,
        """
        for (const s of [0, 1, 2, 3, 4, 5]) trend.add(s, 1.0, 0);
        await trend.queue;
        trend.add(4, 2.0, 1);
        const kept = [0, 1, 2, 3].map((s) => ({ step: s, step_time_s: 1.0, attempt: 0 }));
        await trend.reset(kept, 1);
        """,
    )
    assert got["x"] == [0, 1, 2, 3, 4]
    assert got["y"] == [1.0, 1.0, 1.0, 1.0, 2.0]
    assert got["points"] == "5"


def test_out_of_order_and_repeated_steps_redraw_in_order(page, base_url):
    got = _run(
        page,
        base_url,
        """
        await trend.reset([], 0);
        trend.add(2, 0.3, 0);
        await trend.queue;
        trend.add(0, 0.1, 0);
        trend.add(2, 0.3, 0);
        trend.add(1, 0.2, 0);
        """,
    )
    assert got["x"] == [0, 1, 2]
    assert got["points"] == "3"
