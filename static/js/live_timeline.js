import { drawArrow } from "./arrow.js";
// The measured timeline of one step: a row per rank (grouped by dp, pp, tp), every timed
// interval as a bar, the replay ghost under each row, send -> receive arrows on a canvas.
import { tr } from "./i18n.js";
import { GROUP, KIND } from "./palette.js";
import { CONFIG, whenPlotly } from "./plot.js";

export const LIVE_KIND = { ...KIND, pp_recv: "#9ecae1", pp_send: "#6baed6", cp: GROUP.cp, ep: GROUP.ep };
// [kind, bar width, offset] in row units; y grows downwards (reversed axis), so a negative
// offset is the upper part of the row. The ghost takes the lower part.
const LAYERS = [
  ["pp_recv", 0.5, -0.36], ["F", 0.5, -0.36], ["B", 0.5, -0.36], ["W", 0.5, -0.36],
  ["dp", 0.5, -0.36], ["optim", 0.5, -0.36], ["tp", 0.14, -0.36], ["pp_send", 0.08, 0.06],
  ["cp", 0.14, -0.2], ["ep", 0.14, -0.2], // imported runs' CP exchanges and EP all-to-alls
];
const GHOST = { width: 0.2, offset: 0.17 };
const ARROW_LIMIT = 800;

// A folded row (app/core/views/row_fold.py) stands for its stage's ranks: "p3 ×256 (r17)";
// an outlier keeps its coordinates and says how far its step end is from its stage's median.
export function rowLabel(r) {
  if (r.folded) return `p${r.pp} ×${r.folded} (r${r.rank})`;
  const own = `r${r.rank} d${r.dp}·p${r.pp}${r.cp === undefined ? "" : `·c${r.cp}`}·t${r.tp}`;
  if (r.outlier === undefined) return own;
  return `${own} ${r.outlier > 0 ? "+" : ""}${Math.round(r.outlier * 100)}%`;
}

function ms(s) {
  return `${(s * 1e3).toFixed(2)} ms`;
}

export class LiveTimeline {
  constructor(div, overlay) {
    this.div = div;
    this.overlay = overlay;
    this.links = [];
  }

  measuredTraces(events, rowOf) {
    return LAYERS.map(([kind, width, offset]) => {
      const ev = events.filter((e) => e.kind === kind && rowOf.has(e.rank));
      return {
        type: "bar", orientation: "h", name: tr(`live.kind.${kind}`), meta: kind, width, offset,
        base: ev.map((e) => e.start), x: ev.map((e) => Math.max(e.end - e.start, 1e-9)),
        y: ev.map((e) => rowOf.get(e.rank)), marker: { color: LIVE_KIND[kind] },
        customdata: ev.map((e) => [e.rank, e.microbatch ?? "", ms(e.start), ms(e.end)]),
        hovertemplate: `rank %{customdata[0]} · ${kind} %{customdata[1]}<br>%{customdata[2]} → %{customdata[3]}<extra></extra>`,
      };
    }).filter((t) => t.base.length);
  }

  // The replay's events of each row's stage (the schedule simulated with this run's own
  // mean F/B/W), drawn thin and grey under the measured bars.
  ghostTrace(replay, rows) {
    if (!replay) return [];
    const byStage = new Map();
    for (const e of replay.events) {
      if (!byStage.has(e.stage)) byStage.set(e.stage, []);
      byStage.get(e.stage).push(e);
    }
    const base = [], x = [], y = [], text = [];
    rows.forEach((r, i) => {
      for (const e of byStage.get(r.pp) ?? []) {
        base.push(e.start); x.push(e.end - e.start); y.push(i);
        text.push(`${e.kind}${e.microbatch} ${ms(e.start)} → ${ms(e.end)}`);
      }
    });
    return [{
      type: "bar", orientation: "h", name: tr("live.replay"), meta: "replay", base, x, y,
      width: GHOST.width, offset: GHOST.offset, text, textposition: "none",
      marker: { color: "rgba(90,90,90,.35)", line: { color: "rgba(60,60,60,.6)", width: 0.5 } },
      hovertemplate: `${tr("live.replay")} %{text}<extra></extra>`,
    }];
  }

  async draw(a) {
    const rows = a.rows;
    const rowOf = new Map(rows.map((r, i) => [r.rank, i]));
    const events = a.measured.events;
    this.links = a.measured.links;
    this.rowOf = rowOf;
    const end = Math.max(0, ...events.map((e) => e.end), ...(a.replay?.events ?? []).map((e) => e.end));
    const traces = [...this.ghostTrace(a.replay, rows), ...this.measuredTraces(events, rowOf)];
    // Room for the longest rank label (an outlier's carries its offset): ~6.5 px a character.
    const left = Math.min(240, Math.max(118, 12 + 6.5 * Math.max(...rows.map((r) => rowLabel(r).length))));
    const layout = {
      barmode: "overlay", height: Math.min(900, 90 + rows.length * 30), hovermode: "closest",
      margin: { l: left, r: 12, t: 10, b: 40 }, showlegend: false,
      xaxis: { title: { text: tr("live.axis.step_start") }, range: [0, end * 1.01 || 1], zeroline: false },
      yaxis: { tickvals: rows.map((_, i) => i), ticktext: rows.map(rowLabel),
        range: [rows.length - 0.5, -0.5], fixedrange: true, tickfont: { size: 11 } },
    };
    const Plotly = await whenPlotly();
    await Plotly.react(this.div, traces, layout, CONFIG);
    this.div.dataset.rows = String(rows.length);
    this.div.dataset.events = String(events.length);
    this.div.dataset.ranksDrawn = String(new Set(events.map((e) => e.rank)).size);
    if (!this.bound) {
      this.bound = true;
      this.div.on("plotly_relayout", () => this.drawLinks());
      this.div.on("plotly_afterplot", () => this.drawLinks());
    }
    this.drawLinks();
  }

  drawLinks() {
    const fl = this.div._fullLayout;
    if (!fl?.xaxis) return;
    const dpr = window.devicePixelRatio || 1;
    const [w, h] = [this.div.offsetWidth, this.div.offsetHeight];
    const c = this.overlay;
    Object.assign(c, { width: w * dpr, height: h * dpr });
    Object.assign(c.style, { width: `${w}px`, height: `${h}px` });
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const x = (v) => fl.xaxis._offset + fl.xaxis.l2p(v);
    const y = (v) => fl.yaxis._offset + fl.yaxis.l2p(v);
    ctx.save();
    ctx.beginPath();
    ctx.rect(fl.xaxis._offset, fl.yaxis._offset, fl.xaxis._length, fl.yaxis._length);
    ctx.clip();
    ctx.strokeStyle = ctx.fillStyle = "rgba(40,40,40,.55)";
    ctx.lineWidth = 1;
    let drawn = 0;
    for (const l of this.links.slice(0, ARROW_LIMIT)) {
      const [a, b] = [this.rowOf.get(l.src), this.rowOf.get(l.dst)];
      if (a === undefined || b === undefined) continue;
      const down = b > a;
      const [x1, y1, x2, y2] = [x(l.send), y(a + (down ? 0.14 : -0.36)), x(l.recv), y(b + (down ? -0.36 : 0.14))];
      drawArrow(ctx, x1, y1, x2, y2, 6);
      drawn += 1;
    }
    ctx.restore();
    this.div.dataset.links = String(drawn);
  }
}

const KINDS = ["F", "B", "W", "tp", "cp", "ep", "pp_recv", "pp_send", "dp", "optim"];

// ``present``: the kinds the drawn step has, so a tp=1 run lists no TP all-reduce and 1F1B no
// weight gradient; before any step, every kind of a 3D run.
export function legend(box, present = null) {
  box.replaceChildren();
  const kinds = present ? KINDS.filter((k) => present.has(k)) : KINDS.filter((k) => k !== "cp" && k !== "ep");
  for (const k of kinds) {
    const label = tr(`live.kind.${k}`);
    const item = document.createElement("span");
    const sw = document.createElement("i");
    sw.style.background = LIVE_KIND[k];
    item.append(sw, label);
    box.append(item);
  }
  const ghost = document.createElement("span");
  const sw = document.createElement("i");
  sw.style.background = "rgba(90,90,90,.35)";
  ghost.append(sw, tr("live.ghost"));
  box.append(ghost);
}
