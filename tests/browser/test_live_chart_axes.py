"""The run page's per-action residual chart and step-time trend, drawn in Chromium (zh):
- the step and microbatch axes are whole numbers, so they show no 0.5 ticks (a 5-step run's
  trend read 0, 0.5, 1, 1.5 ... and so did the microbatch axis of every run);
- each microbatch's stages stay left of the next microbatch: a fixed 0.08 a stage put stage 13
  of microbatch m beyond m + 1, and the hover, which rounded x, named the wrong microbatch;
- the hovers are in the page's language (they were English on the zh page)."""

import pytest

pytestmark = pytest.mark.browser

STAGES, MICROBATCHES = 16, 4

RESIDUALS = """async ([stages, microbatches]) => {
  const { drawResiduals } = await import("/static/js/live_charts.js");
  const div = document.createElement("div"), table = document.createElement("table");
  document.body.append(div, table);
  const actions = [];
  for (let s = 0; s < stages; s++) for (let m = 0; m < microbatches; m++)
    actions.push({ rank: s, stage: s, kind: "F", microbatch: m, chunk: 0, start_s: 0,
                   end_s: 0.001 * (s - m), duration_s: 0.0001 });
  const summary = { n: actions.length, mean_abs_end_s: 0.01, max_abs_end_s: 0.02,
                    mean_duration_s: 0.0001 };
  await drawResiduals(div, table, { residuals: { actions, by_kind: { F: summary } } });
  const t = div.data[0];
  return { x: [...t.x], mb: t.customdata.map((c) => c[3]), hover: t.hovertemplate,
           ticks: [...div.querySelectorAll(".xtick text")].map((e) => e.textContent) };
}"""

TREND = """async (last) => {
  const { Trend } = await import("/static/js/live_charts.js");
  const div = document.createElement("div");
  document.body.append(div);
  const trend = new Trend(div);
  await trend.reset([0, 1, 2, 3, 4].map((s) => ({ step: s, step_time_s: 0.3, attempt: 0 })), 0);
  const short = [...div.querySelectorAll(".xtick text")].map((e) => e.textContent);
  for (let s = 5; s <= last; s++) trend.add(s, 0.3, 0);  // live steps: extendTraces
  await trend.queue;
  await new Promise((r) => requestAnimationFrame(() => r()));
  return { short, long: [...div.querySelectorAll(".xtick text")].map((e) => e.textContent),
           hover: div.data[0].hovertemplate, points: div.dataset.points };
}"""


def _whole(labels: list[str]) -> bool:
    return bool(labels) and all(label.lstrip("−-").isdigit() for label in labels)


def test_residuals_keep_microbatches_apart_on_whole_ticks_in_zh(page, base_url):
    page.goto(f"{base_url}/runs?lang=zh")
    got = page.evaluate(RESIDUALS, [STAGES, MICROBATCHES])
    assert all(m <= x < m + 1 for x, m in zip(got["x"], got["mb"], strict=True)), got["x"]
    assert _whole(got["ticks"]), got["ticks"]
    assert "%{customdata[3]}" in got["hover"] and "结束时刻偏差" in got["hover"]
    assert "end off by" not in got["hover"]


def test_the_trend_has_whole_step_ticks_short_and_long_in_zh(page, base_url):
    page.goto(f"{base_url}/runs?lang=zh")
    got = page.evaluate(TREND, 40)
    assert got["points"] == "41"
    assert _whole(got["short"]) and len(got["short"]) == 5, got["short"]
    # Past a dozen steps the axis is laid out again, not a tick per step.
    assert _whole(got["long"]) and len(got["long"]) < 12, got["long"]
    assert got["hover"].startswith("第 %{x} 步")


HEATMAP = """async (width) => {
  const { drawHeatmap } = await import("/static/js/live_charts.js");
  const div = document.createElement("div");
  div.style.width = `${width}px`;
  document.body.append(div);
  const x = ["dp0·tp0", "dp0·tp1", "dp1·tp0", "dp1·tp1"];
  const times = [[0.273, 0.284, 0.275, 0.281], [0.278, 0.278, 0.269, 0.279]];
  const heatmap = { x, y: ["pp0", "pp1"], ranks: [[0, 1, 4, 5], [2, 3, 6, 7]],
                    metrics: { step_time_s: times } };
  await drawHeatmap(div, { heatmap }, "step_time_s");
  return [...div.querySelectorAll(".xtick text")].map((t) => {
    const b = t.getBoundingClientRect(); return [b.left, b.right]; });
}"""


def test_heatmap_column_labels_stand_apart_on_a_phone(page, base_url):
    # dp 2 x tp 2 x pp 2 in the run page's heatmap card on a 390 px phone (332 px of chart).
    page.goto(f"{base_url}/runs?lang=zh")
    boxes = page.evaluate(HEATMAP, 332)
    assert len(boxes) == 4
    for (_, right), (left, _) in zip(boxes, boxes[1:], strict=False):
        assert left - right >= 3, boxes
