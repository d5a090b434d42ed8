// The comparison's shared-axis charts. They draw the core's numbers and derive none:
// the x range of the timelines, the fits flags and every byte count come from /api/compare.
import { bytes, el, num, pct, seconds } from "./fmt.js";
import { fill } from "./i18n.js";
import { categorical, CROSS, DIM, KIND, MEMORY_PARTS } from "./palette.js";
import { CONFIG, whenPlotly } from "./plot.js";
import { tr } from "./state.js";
import { CanvasTimeline } from "./timeline_canvas.js";
import { htmlLegend } from "./chart_legend.js";

const GIB = 1024 ** 3; // display unit only

export function label(cmp, m) {
  const s = m.scenario;
  const what = cmp.preset === "schedules" ? s.schedule : `${s.dp}×${s.tp}×${s.pp}`;
  return `${m.index + 1}. ${what}`;
}

const valid = (cmp) => cmp.members.filter((m) => m.valid);
// A column the core does not rank (forward only: not a training step); older JSON has no flag.
const unranked = (m) => m.ranked === false;

// Greedy line breaks for a chart note (Plotly does not wrap): break after a space or CJK
// punctuation, or between CJK characters, so each line fits about px pixels at 11 px.
function wrap(text, px) {
  const width = (s) => [...s].reduce((w, c) => w + (c.charCodeAt(0) > 0x2e80 ? 11 : 6.2), 0);
  const parts = text.match(/[^\s，、：；]*[\s，、：；]?|./gu).filter(Boolean).flatMap((p) => (width(p) > px ? [...p] : [p]));
  const lines = [""];
  for (const p of parts) {
    if (lines.at(-1) && width(lines.at(-1) + p) > px) lines.push("");
    lines[lines.length - 1] += p;
  }
  return lines.map((l) => l.trim());
}

// The chart's verdict, written on it: which column is the fastest training step that fits
// (the core's winner), and which hatched grey columns are not training steps, so not ranked.
function notes(cmp, ms, px) {
  const out = [];
  const best = ms.find((m) => m.index === cmp.winner);
  if (best) out.push(...wrap(`★ ${fill("cmp.chart.winner", { name: label(cmp, best) })}`, px));
  const off = ms.filter(unranked);
  if (off.length) out.push(...wrap(fill("cmp.chart.not_training", { names: off.map((m) => label(cmp, m)).join(", ") }), px));
  return out;
}

async function metrics(div, cmp) {
  const ms = valid(cmp);
  const x = ms.map((m) => label(cmp, m));
  const cols = ms.map((m) => (unranked(m) ? DIM : categorical(m.index)));
  const pattern = { shape: ms.map((m) => (unranked(m) ? "/" : m.summary.fits ? "" : "x")),
    fgcolor: ms.map((m) => (unranked(m) ? "#555555" : CROSS)), solidity: 0.35 };
  const keys = [["step_time_s", "perf.step_time", seconds], ["mfu", "perf.mfu", pct],
    ["tokens_per_s", "perf.tokens", (v) => num(v, 4)]];
  const off = ` · ${tr("cmp.chart.not_training_short")}`;
  const traces = keys.map(([k, name, f], i) => ({
    type: "bar", x, y: ms.map((m) => m.summary[k]), xaxis: `x${i + 1}`, yaxis: `y${i + 1}`,
    marker: { color: cols, pattern, line: { color: ms.map((m) => (m.index === cmp.winner ? "#111111" : "rgba(0,0,0,0)")), width: 2 } },
    text: ms.map((m) => f(m.summary[k])), textposition: "outside", cliponaxis: false,
    customdata: ms.map((m) => (unranked(m) ? off : "")),
    hovertemplate: `%{x}%{customdata}<br>${tr(name)}: %{text}<extra></extra>`, name: tr(name),
  }));
  // The note starts at the plot's left edge (margin 50 px) and may run into the right margin.
  const lines = notes(cmp, ms, Math.max(200, (div.clientWidth || 600) - 64));
  const top = 30 + 15 * lines.length;
  const layout = { height: 280 + 15 * lines.length, showlegend: false, margin: { l: 50, r: 10, t: top, b: 60 },
    grid: { rows: 1, columns: 3, pattern: "independent" },
    annotations: keys.map(([, name], i) => ({ text: `<b>${tr(name)}</b>`, showarrow: false,
      xref: `x${i + 1} domain`, yref: "paper", x: 0.5, y: 1.12 })) };
  if (lines.length) layout.annotations.push({ text: lines.join("<br>"), showarrow: false, align: "left",
    xref: "paper", yref: "paper", x: 0, xanchor: "left", y: 1, yanchor: "bottom", yshift: 28,
    font: { size: 11, color: "#333333" }, name: "verdict" });
  const Plotly = await whenPlotly();
  await Plotly.react(div, traces, layout, CONFIG);
  div.dataset.values = JSON.stringify(ms.map((m) => m.summary.step_time_s));
  div.dataset.unranked = ms.filter(unranked).map((m) => m.index).join(",");
  div.dataset.note = lines.join(" ");
}

async function memory(div, cmp) {
  const ms = valid(cmp);
  const n = Math.max(1, ms.length);
  const traces = [];
  const shapes = [];
  const annotations = [];
  const layout = { height: 300, barmode: "stack", margin: { l: 50, r: 10, t: 34, b: 40 },
    yaxis: { title: { text: "GiB" } }, showlegend: false };
  // Every component the overview's card draws, so each stack reaches the stage's total; the
  // ones no column has are left out of the legend.
  const parts = MEMORY_PARTS.filter(([key]) => ms.some((m) => m.memory.per_stage.some((st) => st[key] > 0)));
  const narrow = (div.clientWidth || 800) / n < 190; // a phone: short titles, few ticks
  ms.forEach((m, k) => {
    const ax = k ? `x${k + 1}` : "x";
    const stages = m.memory.per_stage.map((s) => s.stage);
    layout[`xaxis${k ? k + 1 : ""}`] = { domain: [k / n + 0.01, (k + 1) / n - 0.01], type: "category",
      title: { text: narrow ? "" : tr("stage") }, tickfont: { size: 10 }, nticks: narrow ? 3 : 12 };
    for (const [key, name, color] of parts) {
      traces.push({ type: "bar", x: stages, y: m.memory.per_stage.map((s) => s[key] / GIB), xaxis: ax,
        yaxis: "y", name: tr(name), legendgroup: key, showlegend: k === 0, marker: { color },
        hovertemplate: `${label(cmp, m)} · ${tr("stage")} %{x}<br>${tr(name)}: %{y:.2f} GiB<extra></extra>` });
    }
    const cap = m.memory.capacity_bytes / GIB;
    shapes.push({ type: "line", xref: `${ax} domain`, x0: 0, x1: 1, yref: "y", y0: cap, y1: cap,
      line: { color: CROSS, dash: "dash", width: 2 } });
    const verdict = m.memory.fits ? tr("mem.fits") : tr("mem.oom");
    const title = narrow ? `<b>${m.index + 1}</b> ${m.memory.fits ? "✓" : "OOM"}` : `<b>${label(cmp, m)}</b> · ${verdict}`;
    annotations.push({ text: title, showarrow: false, yref: "paper",
      xref: `${ax} domain`, x: 0.5, y: 1.1, font: { color: m.memory.fits ? "#2e7d32" : CROSS } });
  });
  // One y range for all: 1.5x HBM, so an OOM column runs off the top with its peak written there.
  const cap = Math.max(...ms.map((m) => m.memory.capacity_bytes / GIB));
  const fit = Math.max(0, ...ms.filter((m) => m.memory.fits).map((m) => m.memory.peak_bytes / GIB));
  const top = Math.max(cap * 1.5, fit * 1.1);
  layout.yaxis.range = [0, top];
  ms.forEach((m, k) => {
    const peak = m.memory.peak_bytes / GIB;
    if (peak > top) annotations.push({ text: `▲ ${bytes(m.memory.peak_bytes)}`, showarrow: false,
      xref: `${k ? `x${k + 1}` : "x"} domain`, x: 0.5, yref: "y", y: top, yanchor: "top",
      font: { color: "#fff", size: 13 }, bgcolor: CROSS });
  });
  Object.assign(layout, { shapes, annotations });
  htmlLegend(div, parts.map(([, name, color]) => [tr(name), color]));
  const Plotly = await whenPlotly();
  await Plotly.react(div, traces, layout, CONFIG);
  div.dataset.fits = ms.map((m) => m.memory.fits).join(",");
}

async function comm(div, cmp) {
  const axes = ["tp", "pp", "dp"];
  const traces = valid(cmp).map((m) => ({
    type: "bar", name: label(cmp, m), x: axes.map((a) => a.toUpperCase()),
    y: axes.map((a) => m.comm[`${a}_bytes`] / GIB),
    marker: { color: categorical(m.index), pattern: { shape: axes.map((a) => (m.comm.links[a] === "inter" ? "/" : "")) } },
    customdata: axes.map((a) => [bytes(m.comm[`${a}_bytes`]), tr(`link.${m.comm.links[a]}`)]),
    hovertemplate: `${label(cmp, m)} · %{x}<br>%{customdata[0]} · %{customdata[1]}<extra></extra>`,
  }));
  // Log ticks at powers of ten only: "D2" stacked 2s and 5s between them.
  const layout = { height: 300, barmode: "group", margin: { l: 56, r: 10, t: 10, b: 40 },
    yaxis: { title: { text: "GiB" }, type: "log", dtick: 1 }, showlegend: false };
  htmlLegend(div, valid(cmp).map((m) => [label(cmp, m), categorical(m.index)]));
  const Plotly = await whenPlotly();
  await Plotly.react(div, traces, layout, CONFIG);
}

function legend(box) {
  box.replaceChildren();
  for (const k of ["F", "B", "W", "dp", "optim", "idle"]) {
    const item = el("span", { class: "item" });
    item.append(el("i", { style: `background:${KIND[k]}`, class: k === "idle" ? "pattern" : "" }), tr(`kind.${k}`));
    box.append(item);
  }
  const tp = el("span", { class: "item" });
  tp.append(el("i", { style: `background:${KIND.tp}` }), tr("flow.tp_pulse"));
  box.append(tp);
}

function timelineHead(box, cmp, m) {
  const name = `${label(cmp, m)}${cmp.preset === "schedules" ? "" : ` · ${m.schedule.name}`}, m = ${m.schedule.microbatches}`;
  box.append(el("h3", { style: `color:${categorical(m.index)}` }, name));
  if (m.timeline.omitted) {
    box.append(el("p", { class: "muted" }, tr("cmp.timeline.omitted")));
    return null;
  }
  const div = el("div", { class: "timeline", "data-index": m.index });
  box.append(div);
  return div;
}

// The first timeline on screen: what the compare bench times as the page's first draw.
function markFirst() {
  if (!performance.getEntriesByName("meshscope:compare-first").length) performance.mark("meshscope:compare-first");
}

function axisNote(box, axis) {
  document.getElementById("timelines-hint").textContent = tr(axis.shared ? "cmp.timelines.hint" : "cmp.timelines.mixed");
  box.dataset.range = axis.shared ? String(axis.max) : "";
}

// One canvas timeline per column on the shared time axis; hovering one draws the same
// instant on all, and a zoom (drag; double-click resets) applies to all.
function timelines(box, cmp) {
  box.replaceChildren();
  const axis = cmp.time_axis;
  axisNote(box, axis);
  const drawn = [];
  const linked = (fn) => (v) => (axis.shared ? drawn : []).forEach((t) => fn(t, v));
  for (const m of valid(cmp)) {
    const div = timelineHead(box, cmp, m);
    if (!div) continue;
    const tl = new CanvasTimeline(div, axis.shared
      ? { onHover: linked((t, v) => t.setMarker(v)), onZoom: linked((t, r) => t.zoom(r)) } : {});
    tl.setData(m, axis.shared ? axis.max : m.timeline.end);
    drawn.push(tl);
    markFirst();
  }
}

// A streamed comparison's timelines, each drawn as its column comes, linked as timelines()
// links them: the axis is the longest seen so far, and the earlier ones stretch when a later
// column ends later. Once every column is in, drawCharts keeps this drawing when it is what
// timelines() would draw (one unit, the same end), and draws them all again otherwise.
export class TimelineFeed {
  constructor(cmp) {
    this.cmp = cmp;
    this.box = document.getElementById("timelines");
    this.drawn = [];
    this.end = 0;
    this.units = null;
    this.mixed = false;
  }

  add(m) {
    if (m.index === 0) this.box.replaceChildren(); // the previous drawing stays until then
    if (!m.valid) return;
    this.units ??= m.timeline.units;
    this.mixed ||= m.timeline.units !== this.units;
    if (!this.mixed && m.timeline.end > this.end) {
      this.end = m.timeline.end;
      for (const t of this.drawn) t.setEnd(this.end);
    }
    const div = timelineHead(this.box, this.cmp, m);
    if (!div) return;
    const linked = (fn) => (v) => this.drawn.forEach((t) => fn(t, v));
    const tl = new CanvasTimeline(div, this.mixed ? {}
      : { onHover: linked((t, v) => t.setMarker(v)), onZoom: linked((t, r) => t.zoom(r)) });
    tl.setData(m, this.mixed ? m.timeline.end : this.end);
    this.drawn.push(tl);
    markFirst();
  }

  complete(cmp) {
    const axis = cmp.time_axis;
    return !this.mixed && axis.shared && axis.max === this.end;
  }
}

function cell(v) {
  if (v === null || v === undefined) return "—";
  if (typeof v === "boolean") return tr(v ? "cmp.yes" : "cmp.no");
  return String(v);
}

function diff(table, cmp) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  head.append(el("th", {}, tr("cmp.diff.param")));
  for (const m of cmp.members) head.append(el("th", { style: `color:${categorical(m.index)}` }, label(cmp, m)));
  const body = table.createTBody();
  for (const row of cmp.diff) {
    const tr_ = body.insertRow();
    tr_.dataset.key = row.key;
    tr_.className = `${row.kind}${row.changed ? " changed" : ""}`;
    tr_.insertCell().textContent = tr(row.kind === "field" ? `field.${row.key}` : `cmp.diff.${row.key}`);
    row.values.forEach((v, i) => {
      const td = tr_.insertCell();
      td.textContent = cell(v);
      if (row.key.startsWith("crosses_node") && v === true) td.className = "cross";
      if (row.changed && i > 0 && JSON.stringify(v) !== JSON.stringify(row.values[0])) td.classList.add("moved");
    });
  }
}

// feed: a streamed comparison's TimelineFeed, whose drawing is kept when complete.
export async function drawCharts(cmp, feed = null) {
  const $ = (id) => document.getElementById(id);
  diff($("diff"), cmp);
  legend($("cmp-legend"));
  // The columns and the timelines need no Plotly: drawn (and marked) before its charts.
  if (feed?.complete(cmp)) axisNote($("timelines"), cmp.time_axis);
  else timelines($("timelines"), cmp);
  performance.mark("meshscope:compare-drawn");
  await Promise.all([metrics($("metrics-chart"), cmp), memory($("memory-chart"), cmp),
    comm($("comm-chart"), cmp)]);
}
