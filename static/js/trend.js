// Trend page: draws the sweep JSON (no formula here) and keeps the sweep in the URL.
import { bindForm, bindHeader, showErrors } from "./controls.js";
import { bytes, el, num, pct, seconds } from "./fmt.js";
import { errorText } from "./i18n.js";
import { categorical } from "./palette.js";
import { CONFIG, whenPlotly } from "./plot.js";
import { fetchScenarioJSON, params, setParams, tr } from "./state.js";

const page = JSON.parse(document.getElementById("page-data").textContent);
const sweepKeys = new Set([...page.sweep_keys, "open"]);
const GIB = 2 ** 30;
const DASH = ["solid", "dash", "dot"];
const AXIS_DASH = { cp_share: "dashdot", ep_share: "longdash" }; // as trend.key.cp_share says
// chart -> [metric, y scale, axis format, hover format]
const CHARTS = {
  bubble: [["bubble_fraction", "bubble_over_ideal"], 1, ".0%", pct],
  memory: [["peak_bytes"], GIB, "", (y) => bytes(y * GIB)],
  time: [["step_time_s"], 1, "", seconds],
  tput: [["tokens_per_s"], 1, "~s", num],
  comm: [["tp_share", "pp_share", "dp_share"], 1, ".0%", pct],
  mfu: [["mfu"], 1, ".0%", pct],
};
const box = document.getElementById("trend-charts");
const panel = document.getElementById("point-panel");
let flat = [];
let seq = 0;

const label = (sweep, key) =>
  sweep.series === "schedule" ? key : sweep.series === "none" ? "" : `${tr(`trend.knob.${sweep.series}`)} = ${key}`;

// An invalid point's reason in the page's language: its message key's template, else English.
const reason = (pt) => errorText({ type: pt.key ?? "value_error", msg: pt.reason, ctx: pt.params });

function href(pt, view) {
  const q = new URLSearchParams(pt.query);
  if (params().lang) q.set("lang", params().lang);
  return `${view === "flow" ? "/flow" : "/"}?${q}`;
}

function show(pt) {
  panel.replaceChildren(el("b", {}, `${pt.line ? pt.line + " · " : ""}${tr(`trend.knob.${pt.knob}`)} = ${pt.x}`));
  if (!pt.valid) panel.append(el("span", { class: "oom" }, ` ${tr("trend.invalid")}: ${pt.field} — ${reason(pt)}`));
  if (!pt.query) return;
  for (const view of ["overview", "flow"])
    panel.append(" ", el("a", { href: href(pt, view), "data-open": view }, tr(`trend.open_${view}`)));
}

const INVALID = "#111";

// The comm chart adds the CP ring's and EP all-to-alls' exposed shares when the core sent
// them (points with cp or ep > 1): a 3D sweep draws its three lines as before.
function metricsOf(sweep, name) {
  const base = CHARTS[name][0];
  if (name !== "comm") return base;
  const has = (m) => sweep.lines.some((l) => l.points.some((p) => p[m] !== undefined));
  return [...base, ...["cp_share", "ep_share"].filter(has)];
}

function commKey(sweep) {
  const hint = document.getElementById("chart-comm")?.previousElementSibling;
  if (!hint?.classList.contains("hint")) return;
  hint.dataset.base ??= hint.textContent;
  const extra = metricsOf(sweep, "comm").slice(3).map((m) => tr(`trend.key.${m}`));
  hint.textContent = [hint.dataset.base, ...extra].join(" · ");
}

function traces(sweep, name) {
  const [, scale, , fmt] = CHARTS[name];
  const metrics = metricsOf(sweep, name);
  const x = tr(`trend.knob.${sweep.knob}`);
  const out = [];
  sweep.lines.forEach((line, i) => metrics.forEach((m, j) => {
    const pts = line.points;
    out.push({
      x: pts.map((p) => p.x), y: pts.map((p) => (p.valid && p[m] !== undefined ? p[m] / scale : null)),
      customdata: pts.map((p) => p.i), text: pts.map((p) => (p.valid && p[m] !== undefined ? fmt(p[m] / scale) : "")),
      name: [label(sweep, line.key), metrics.length > 1 ? tr(`trend.m.${m}`) : ""].filter(Boolean).join(" · "),
      mode: "lines+markers", line: { color: categorical(i), dash: AXIS_DASH[m] ?? DASH[j] }, marker: { size: 5 },
      hovertemplate: `%{fullData.name}<br>${x} = %{x}: %{text}<extra></extra>`,
    });
  }));
  const bad = flat.filter((p) => !p.valid);
  // Invalid points in a strip along the top (their own hidden axis), in black: at y = 0 they
  // hid the x ticks and sat among the near-zero points, and their grey was a series colour
  // (categorical(9), the 10th line). The charts show no toolbar, which covered that strip.
  out.push({ x: bad.map((p) => p.x), y: bad.map(() => 0.94), yaxis: "y2", customdata: bad.map((p) => p.i),
    text: bad.map((p) => `${p.line} ${x} = ${p.x}<br>${tr("trend.invalid")}: ${p.field} — ${reason(p)}`),
    mode: "markers", marker: { symbol: "x-thin", size: 9, color: INVALID, line: { width: 2, color: INVALID } },
    hovertemplate: "%{text}<extra></extra>" });
  return out;
}

// Ticks at the swept values, but never closer than MIN_TICK_PX: on a phone a log axis
// would print 9, 10, 11... on top of each other.
const MIN_TICK_PX = 30;
function spacedTicks(xs, log, widthPx) {
  const pos = (x) => (log ? Math.log(x) : x);
  const span = pos(xs.at(-1)) - pos(xs[0]) || 1;
  const kept = [];
  for (const x of xs) {
    const px = ((pos(x) - pos(xs[0])) / span) * widthPx;
    if (!kept.length || px - kept.at(-1)[1] >= MIN_TICK_PX) kept.push([x, px]);
  }
  return kept.map(([x]) => x);
}

function layout(sweep, name) {
  const xs = sweep.values;
  const log = xs.at(-1) / xs[0] >= 16;
  // The chart's own width (at 1440 px the charts sit two abreast), less the margins below.
  const chart = document.getElementById(`chart-${name}`);
  const plotWidth = Math.max(100, (chart?.clientWidth || box.clientWidth || 600) - 70);
  const lay = {
    height: 250, margin: { l: 58, r: 12, t: 6, b: 40 }, showlegend: false, hovermode: "closest",
    xaxis: { title: { text: tr(`trend.knob.${sweep.knob}`) }, type: log ? "log" : "linear",
      tickvals: spacedTicks(xs, log, plotWidth) },
    yaxis: { tickformat: CHARTS[name][2], rangemode: "tozero", ticksuffix: { memory: " GiB", time: " s" }[name] ?? "" },
    yaxis2: { overlaying: "y", range: [0, 1], visible: false, fixedrange: true },
  };
  const cap = flat.find((p) => p.valid)?.capacity_bytes;
  if (name === "memory" && cap) {
    const top = Math.max(cap, ...flat.filter((p) => p.valid).map((p) => p.peak_bytes)) * 1.15 / GIB;
    lay.yaxis.range = [0, top];
    lay.shapes = [{ type: "rect", xref: "paper", x0: 0, x1: 1, y0: cap / GIB, y1: top, line: { width: 0 },
      fillcolor: "rgba(214,39,40,0.12)" }, { type: "line", xref: "paper", x0: 0, x1: 1, y0: cap / GIB,
      y1: cap / GIB, line: { color: "#d62728", dash: "dash" } }];
    // Above the plot, in a margin of its own: inside it, the label sat on the row of ✕ marks
    // (configurations that do not fit) and on high markers.
    lay.margin = { ...lay.margin, t: 22 };
    lay.annotations = [{ xref: "paper", x: 0, xanchor: "left", yref: "paper", y: 1, yanchor: "bottom",
      showarrow: false, text: tr("trend.oom"), font: { color: "#d62728" } }];
  }
  return lay;
}

function legend(sweep) {
  const box = document.getElementById("series-legend");
  box.replaceChildren();
  if (sweep.series === "none") return;
  sweep.lines.forEach((line, i) => {
    const item = el("span", { class: "item" });
    item.append(el("i", { style: `background:${categorical(i)}` }), label(sweep, line.key));
    box.append(item);
  });
}

async function draw(sweep) {
  flat = [];
  for (const line of sweep.lines) {
    for (const p of line.points) {
      p.i = flat.length;
      flat.push({ ...p, line: label(sweep, line.key), knob: sweep.knob });
    }
  }
  Object.assign(box.dataset, { knob: sweep.knob, count: sweep.count, invalid: sweep.invalid, lines: sweep.lines.length });
  document.getElementById("sweep-summary").textContent = tr("trend.summary").replace("{n}", sweep.count).replace("{bad}", sweep.invalid);
  legend(sweep);
  commKey(sweep);
  const Plotly = await whenPlotly();
  for (const name of Object.keys(CHARTS)) {
    const div = document.getElementById(`chart-${name}`);
    await Plotly.react(div, traces(sweep, name), layout(sweep, name), { ...CONFIG, displayModeBar: false });
    if (div.dataset.bound) continue;
    div.dataset.bound = "1";
    div.on("plotly_hover", (ev) => show(flat[ev.points[0].customdata]));
    div.on("plotly_click", (ev) => {
      const pt = flat[ev.points[0].customdata];
      show(pt);
      if (pt.query) location.assign(href(pt, params().open ?? "overview"));
    });
  }
  document.body.dataset.ready = "trend";
}

// Nav links to other views carry the scenario, not this page's sweep keys.
function fixLinks() {
  const shared = Object.fromEntries(Object.entries(params()).filter(([k]) => !sweepKeys.has(k)));
  const qs = new URLSearchParams(shared).toString();
  const sq = new URLSearchParams(params());
  for (const k of page.view_keys) sq.delete(k);
  for (const a of document.querySelectorAll("[data-nav]")) {
    const to = { overview: `/?${qs}`, flow: `/flow?${qs}`, primer: `/primer?${qs}`, api: `/api/sweep?${sq}` }[a.dataset.nav];
    if (to) a.href = to;
  }
}

async function update() {
  const mine = ++seq;
  document.body.dataset.ready = "";
  const res = await fetchScenarioJSON("/api/sweep");
  if (mine !== seq) return; // a slower, older answer never overwrites a newer one
  showErrors(res.ok ? {} : res.errors);
  document.body.dataset.state = res.ok ? "ok" : "error";
  if (res.ok) await draw(res.data);
}

bindHeader();
document.addEventListener("meshscope:url", fixLinks);
fixLinks();
bindForm(update);
document.getElementById("sweep-form").addEventListener("change", (ev) => {
  const { name, value } = ev.target;
  if (!name) return;
  setParams({ [name]: value.trim() });
  if (name !== "open") update();
});
document.body.dataset.state = page.sweep ? "ok" : "error";
if (page.sweep) draw(page.sweep);
