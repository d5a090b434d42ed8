// The live page's smaller charts: bubble causes per rank, the rank-grid heatmap, per-action
// residuals and the step-time trend. Every number comes from the server; these only draw.
import { bytes, pct, seconds } from "./fmt.js";
import { fill, tr } from "./i18n.js";
import { htmlLegend } from "./chart_legend.js";
import { GROUP } from "./palette.js";
import { CONFIG, whenPlotly } from "./plot.js";
import { rowLabel } from "./live_timeline.js";

const CAUSE = {
  compute_s: "#4c78a8", schedule: "#bdbdbd", pp_peers: "#6baed6", tp: "#222222", dp: "#f58518", host: "#e377c2",
  cp: GROUP.cp, ep: GROUP.ep, // only in a run with cp or ep (the analysis's bubble.causes)
};
// The bars and rows of a run's causes, in the server's order (cp and ep where it has them).
const causesOf = (a) => ["compute_s", ...a.bubble.causes].map((key) => [key, CAUSE[key]]);
const causeName = (key) => tr(`live.cause.${key}`);
const TREND_WINDOW = 500; // points kept by extendTraces
const small = { margin: { l: 60, r: 10, t: 10, b: 60 }, height: 280 };
const CELL_CHROME = 140; // px of the heatmap's width that are not cells: margins, colour bar
const CELL_TEXT = 48; // px a cell needs for its "rank N" and value
const WHOLE_TICKS_UP_TO = 12; // a whole-number axis spanning at most this many gets a tick each
const wholeTicks = (span) => (span <= WHOLE_TICKS_UP_TO ? { tick0: 0, dtick: 1 } : {});

function table(el, head, rows) {
  const tr = (cells, tag) => `<tr>${cells.map((c) => `<${tag}>${c}</${tag}>`).join("")}</tr>`;
  el.innerHTML = tr(head, "th") + rows.map((r) => tr(r, "td")).join("");
}

export async function drawBubble(div, tableEl, a) {
  const byRank = new Map(a.rows.map((r) => [r.rank, r]));
  // The timeline's rows: every rank, or past FOLD_AT ranks the folded ones (row_fold.py); the
  // table below keeps the mean over every rank.
  const per = a.bubble.per_rank.filter((p) => byRank.has(p.rank))
    .sort((p, q) => a.rows.indexOf(byRank.get(p.rank)) - a.rows.indexOf(byRank.get(q.rank)));
  const labels = per.map((p) => rowLabel(byRank.get(p.rank)));
  const causes = causesOf(a);
  const traces = causes.map(([key, color]) => ({
    type: "bar", name: causeName(key), x: labels, y: per.map((p) => p[key]), marker: { color },
    hovertemplate: `${causeName(key)}: %{y:.4s}s<extra></extra>`,
  }));
  htmlLegend(div, causes.map(([key, color]) => [causeName(key), color]));
  const Plotly = await whenPlotly();
  await Plotly.react(div, traces, { ...small, barmode: "stack", showlegend: false,
    yaxis: { title: { text: tr("live.axis.seconds") } }, xaxis: { tickangle: -40, tickfont: { size: 10 } } }, CONFIG);
  // Shares on the page's one basis (analysis "shares"): the mean rank's step, as the advice.
  const m = a.bubble.mean;
  const basis = a.shares.step_time_s;
  const head = [tr("live.table.mean_per_rank"), tr("live.table.seconds"), fill("live.table.of_mean_step", { time: seconds(basis) })];
  table(tableEl, head, causes.map(([k]) =>
    [causeName(k), seconds(m[k]), pct(basis > 0 ? m[k] / basis : NaN)]));
  tableEl.dataset.basis = String(basis);
  div.dataset.ranks = String(per.length);
}

// Every cell the same value: Plotly centres its colour bar on it, ±0.4 around (a bar of
// negative seconds for a zero); the bar runs from the value instead, or 0-1 for a zero.
function flatRange(z) {
  const values = z.flat().filter((v) => v !== null);
  if (!values.length || values.some((v) => v !== values[0])) return {};
  const v = values[0];
  return v === 0 ? { zmin: 0, zmax: 1 } : { zmin: Math.min(0, v), zmax: Math.max(0, v) * 1.05 || v * 0.95 };
}

export async function drawHeatmap(div, a, metric) {
  const h = a.heatmap;
  const z = h.metrics[metric];
  const fmt = metric === "mem_bytes" ? bytes : metric === "step_time_s" ? seconds : pct;
  const text = z.map((row, i) => row.map((v, j) => `rank ${h.ranks[i][j]}<br>${v === null ? "—" : fmt(v)}`));
  // Each cell names its rank and value where it has room for "rank 12" (~48 px past the
  // margins and the colour bar): a CP run's (dp, cp, tp) columns doubled, and a phone's eight
  // ran into each other. The hover names them either way.
  const room = (div.clientWidth - CELL_CHROME) / Math.max(h.x.length, 1);
  const shown = room >= CELL_TEXT ? "%{text}" : "";
  const trace = { type: "heatmap", x: h.x, y: h.y, z, text, hoverinfo: "text", texttemplate: shown,
    colorscale: "YlOrRd", reversescale: true, showscale: true, xgap: 2, ygap: 2, ...flatRange(z) }; // high = red
  const Plotly = await whenPlotly();
  // Column labels (dp0·tp1) at the bubble chart's size: at 14 px four of them filled a phone's
  // plot edge to edge, too close for Plotly to turn them, and read as one word.
  await Plotly.react(div, [trace], { ...small, margin: { l: 50, r: 10, t: 10, b: 40 },
    xaxis: { tickfont: { size: 10 }, automargin: true }, yaxis: { autorange: "reversed" } }, CONFIG);
}

// Float noise below a nanosecond (in ms) is zero: a replay that matches gave 1e-13 ms, and
// Plotly's axis read "120f".
const noiseless = (ms) => (Math.abs(ms) < 1e-6 ? 0 : ms);

export async function drawResiduals(div, tableEl, a) {
  const acts = a.residuals.actions;
  // Each microbatch's stages side by side within [m, m + 0.6): a fixed 0.08 a stage put stage
  // 13 of microbatch m past m + 1. The hover names the microbatch from the data, not rounded x.
  const stages = acts.reduce((n, r) => Math.max(n, r.stage + 1), 1); // no spread: 100k actions
  const hover = fill("live.hover.residual", { mb: "%{customdata[3]}", rank: "%{customdata[0]}",
    stage: "%{customdata[1]}", end: "%{y:.2f}", duration: "%{customdata[2]:.2f}" });
  const traces = ["F", "B", "W"].map((kind) => {
    const mine = acts.filter((r) => r.kind === kind);
    return { type: "scatter", mode: "markers", name: kind, x: mine.map((r) => r.microbatch + (0.6 * r.stage) / stages),
      y: mine.map((r) => noiseless(r.end_s * 1e3)), marker: { size: 6, opacity: 0.7 },
      customdata: mine.map((r) => [r.rank, r.stage, r.duration_s * 1e3, r.microbatch]),
      hovertemplate: `${kind}${hover}<extra></extra>` };
  }).filter((t) => t.x.length);
  // Microbatches are whole: one tick each while they are few (Plotly's own ticks fall on 0.5s).
  const last = acts.reduce((n, r) => Math.max(n, r.microbatch), 0);
  const Plotly = await whenPlotly();
  await Plotly.react(div, traces, { ...small, xaxis: { title: { text: tr("live.axis.microbatch") }, ...wholeTicks(last) },
    yaxis: { title: { text: tr("live.axis.residual") } } }, CONFIG);
  // Signed, and float noise below a nanosecond reads as zero.
  const show = (x) => (Math.abs(x) < 1e-9 ? seconds(0) : `${x < 0 ? "−" : ""}${seconds(Math.abs(x))}`);
  const rows = Object.entries(a.residuals.by_kind).map(([k, s]) =>
    [k, String(s.n), show(s.mean_abs_end_s), show(s.max_abs_end_s), show(s.mean_duration_s)]);
  const p = a.replay;
  if (p) {
    rows.push([tr("live.table.step"), "", fill("live.table.replay", { time: seconds(p.step_time_s) }),
      fill("live.table.bubble", { pct: pct(p.bubble_fraction) }), ""]);
  }
  const head = ["kind", "actions", "mean_end", "max_end", "mean_duration"].map((k) => tr(`live.table.${k}`));
  table(tableEl, head, rows);
}

// The step-time trend. Points are merged, never replaced wholesale: a snapshot fetched over
// HTTP can be older than steps that reached us over the feed while it was in flight, so a
// snapshot drops only points of an earlier attempt that it no longer lists (superseded by a
// resume). Draws are serialized: a live step is appended with extendTraces, anything else
// (a snapshot, a rewritten or out-of-order step) redraws the whole window once.
export class Trend {
  constructor(div) {
    this.div = div;
    this.points = new Map(); // step -> {step_time_s, attempt}
    this.drawn = null; // the step of the last point on the chart, once drawn
    this.queue = Promise.resolve();
    this.full = false; // a full redraw is already queued
    this.first = 0; // the first step drawn, and whether the axis has a tick a step
    this.unitTicks = false;
  }

  reset(points, attempt) {
    const listed = new Set(points.map((p) => p.step));
    for (const [step, p] of this.points) if (!listed.has(step) && p.attempt < attempt) this.points.delete(step);
    for (const p of points) this.merge(p.step, p.step_time_s, p.attempt);
    return this.redraw();
  }

  // A newly completed step from the feed.
  add(step, stepTime, attempt) {
    const known = this.points.get(step);
    if (!this.merge(step, stepTime, attempt)) return this.queue;
    if (known || this.full || this.drawn === null || step < this.drawn) return this.redraw();
    this.queue = this.queue.then(() => this.extend(step));
    return this.queue;
  }

  merge(step, stepTime, attempt) {
    const known = this.points.get(step);
    if (known && (known.attempt > attempt || (known.attempt === attempt && known.step_time_s === stepTime))) return false;
    this.points.set(step, { step_time_s: stepTime, attempt });
    return true;
  }

  redraw() {
    if (this.full) return this.queue;
    this.full = true;
    this.queue = this.queue.then(() => this.react());
    return this.queue;
  }

  async react() {
    this.full = false;
    const recent = [...this.points.keys()].sort((a, b) => a - b).slice(-TREND_WINDOW);
    const span = recent.length ? recent[recent.length - 1] - recent[0] : 0;
    const trace = { type: "scatter", mode: "lines+markers", name: "step time", x: recent,
      y: recent.map((s) => this.points.get(s).step_time_s), marker: { size: 4 }, line: { color: "#4c78a8" },
      hovertemplate: `${fill("live.hover.step", { step: "%{x}", time: "%{y:.4s}" })}<extra></extra>` };
    const Plotly = await whenPlotly();
    await Plotly.react(this.div, [trace], { ...small, margin: { l: 60, r: 10, t: 10, b: 40 },
      xaxis: { title: { text: tr("live.axis.step") }, ...wholeTicks(span) },
      yaxis: { title: { text: tr("live.axis.slowest") }, rangemode: "tozero" } }, CONFIG);
    this.first = recent.length ? recent[0] : 0;
    this.unitTicks = span <= WHOLE_TICKS_UP_TO;
    this.drawn = recent.length ? recent[recent.length - 1] : -1;
    this.div.dataset.points = String(recent.length);
  }

  async extend(step) {
    if (this.full || (this.drawn !== null && step <= this.drawn)) return; // a queued redraw has it
    // A tick a step was laid out for a short run: past that span, lay the axis out again.
    if (this.unitTicks && step - this.first > WHOLE_TICKS_UP_TO) return this.react();
    const Plotly = await whenPlotly();
    Plotly.extendTraces(this.div, { x: [[step]], y: [[this.points.get(step).step_time_s]] }, [0], TREND_WINDOW);
    this.drawn = step;
    this.div.dataset.points = String(Math.min(this.points.size, TREND_WINDOW));
  }
}
