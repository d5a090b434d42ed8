import { drawArrow } from "./arrow.js";
// The pipeline timeline: Plotly bars (one row per pipeline rank, F/B/W and the step's tail),
// idle shaded as bubble, and an overlay canvas for the cursor and the PP send arrows.
import { commTraces } from "./flow_comm.js";
import { KIND } from "./palette.js";
import { CONFIG, whenPlotly } from "./plot.js";
import { tr } from "./state.js";

const KINDS = ["F", "B", "W", "dp", "optim"];
const LABEL_LIMIT = 3000; // past this many blocks, text labels cost more than they tell
const ARROW_LIMIT = 600; // faint arrows for every send only while they stay readable

// Later chunks of an interleaved schedule are lighter shades of the same kind.
export function shade(hex, chunk, chunks) {
  if (!chunk) return hex;
  const k = (0.45 * chunk) / Math.max(1, chunks - 1);
  const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return `rgb(${c.map((v) => Math.round(v + (255 - v) * k)).join(",")})`;
}

export function label(e, chunks) {
  if (e.kind === "dp" || e.kind === "optim") return tr(`kind.${e.kind}`);
  return chunks > 1 ? `${e.kind}${e.microbatch}.${e.chunk}` : `${e.kind}${e.microbatch}`;
}

// The core sends one number (every stage, F and B alike) or per stage and kind.
export function tpTime(tl, stage, kind) {
  const tp = tl.tp_time;
  if (typeof tp === "number") return tp;
  if (Array.isArray(tp)) return Number(tp[stage]?.[kind] ?? 0) || 0;
  if (tp && typeof tp === "object") return Number(tp[kind]?.[stage] ?? 0) || 0;
  return 0;
}

export class Timeline {
  constructor(div, overlay, opts = {}) {
    this.div = div;
    this.overlay = overlay;
    this.opts = opts;
    this.cursor = 0;
  }

  traces(events, chunks) {
    const text = events.length <= LABEL_LIMIT;
    const out = [];
    for (const kind of KINDS) {
      const ev = events.filter((e) => e.kind === kind);
      if (!ev.length) continue;
      out.push({
        type: "bar", orientation: "h", name: tr(`kind.${kind}`), meta: kind,
        base: ev.map((e) => e.start), x: ev.map((e) => e.end - e.start), y: ev.map((e) => e.stage),
        width: 0.8, marker: { color: ev.map((e) => shade(KIND[kind], e.chunk, chunks)),
          line: { color: "#fff", width: text ? 0.6 : 0 } },
        text: text ? ev.map((e) => label(e, chunks)) : undefined, textposition: "inside",
        insidetextanchor: "middle", textfont: { color: "#fff", size: 11 },
        customdata: ev.map((e) => [e.microbatch, e.chunk, e.start, e.end]),
        hovertemplate: `${tr("stage")} %{y} · ${tr(`kind.${kind}`)}<br>${tr("microbatch")} %{customdata[0]}`
          + (chunks > 1 ? ` · ${tr("chunk")} %{customdata[1]}` : "")
          + "<br>%{customdata[2]:.4g} → %{customdata[3]:.4g}<extra></extra>",
      });
    }
    return out;
  }

  // The core's per-stage TP all-reduce time inside each F and B, drawn as a dark strip
  // along the block's end; nothing when the core does not send tp_time.
  tpTrace(events) {
    const tl = this.model.timeline;
    if (!tl.tp_time) return [];
    const ev = events.filter((e) => (e.kind === "F" || e.kind === "B") && tpTime(tl, e.stage, e.kind) > 0);
    if (!ev.length) return [];
    const dur = ev.map((e) => Math.min(tpTime(tl, e.stage, e.kind), e.end - e.start));
    return [{
      type: "bar", orientation: "h", name: tr("flow.tp_pulse"), meta: "tp", width: 0.22, offset: 0.18,
      base: ev.map((e, i) => e.end - dur[i]), x: dur, y: ev.map((e) => e.stage),
      marker: { color: KIND.tp }, hovertemplate: `${tr("flow.tp_pulse")}: %{x:.3g}<extra></extra>`,
    }];
  }

  // The DP gradient all-reduce the backward hides (overlap_grad_reduce): a hatched strip
  // along the bottom of the blocks it runs under; only the tail's "dp" bar adds time.
  hiddenDpTrace(events) {
    const ev = events.filter((e) => e.kind === "dp_hidden");
    if (!ev.length) return [];
    return [{
      type: "bar", orientation: "h", name: tr("kind.dp_hidden"), meta: "dp_hidden", width: 0.22, offset: -0.4,
      base: ev.map((e) => e.start), x: ev.map((e) => e.end - e.start), y: ev.map((e) => e.stage),
      marker: { color: KIND.dp, pattern: { shape: "x", fgcolor: "#fff", size: 5 } },
      hovertemplate: `${tr("kind.dp_hidden")}: %{x:.3g}<extra></extra>`,
    }];
  }

  async setData(model, extra, stageFilter) {
    this.model = model;
    this.extra = extra;
    this.filter = stageFilter;
    const tl = model.timeline;
    const chunks = model.schedule.virtual_stages;
    const all = [...tl.events, ...(tl.tail ?? [])];
    const events = stageFilter === null ? all : all.filter((e) => e.stage === stageFilter);
    const pp = model.layout.sizes.pp;
    const rows = stageFilter === null ? [...Array(pp).keys()] : [stageFilter];
    this.end = Math.max(tl.makespan, ...all.map((e) => e.end), 0);
    const idle = {
      type: "bar", orientation: "h", name: tr("kind.idle"), meta: "idle", hoverinfo: "skip",
      base: rows.map(() => 0), x: rows.map(() => this.end), y: rows, width: 0.8,
      marker: { color: "#f4f4f4", pattern: { shape: "/", fgcolor: "#c9c9c9", size: 7 } },
    };
    const rowPx = rows.length > 16 ? 18 : 34;
    const layout = {
      barmode: "overlay", height: Math.min(640, 110 + rows.length * rowPx),
      margin: { l: 70, r: 12, t: 14, b: 44 }, hovermode: "closest",
      uniformtext: { mode: "hide", minsize: 8 },
      showlegend: false, // the page's legend names every kind, present or not
      xaxis: { title: { text: tr(tl.units === "abstract" ? "units.abstract" : "units.s") },
        range: [0, this.end * 1.01], zeroline: false },
      yaxis: { tickvals: rows, ticktext: rows.map((s) => `${tr("stage")} ${s}`),
        range: [rows[rows.length - 1] + 0.5, rows[0] - 0.5], fixedrange: true },
    };
    const tpOf = (e) => (tl.tp_time ? Math.min(tpTime(tl, e.stage, e.kind), e.end - e.start) : 0);
    const traces = [idle, ...this.traces(events, chunks), ...this.tpTrace(events),
      ...commTraces(events, extra?.comm, tpOf), ...this.hiddenDpTrace(events)];
    const Plotly = await whenPlotly();
    await Plotly.react(this.div, traces, layout, CONFIG);
    this.div.dataset.events = String(events.length);
    this.div.dataset.rows = rows.join(",");
    if (!this.bound) this.bind();
    this.drawOverlay();
  }

  bind() {
    this.bound = true;
    this.div.on("plotly_hover", (ev) => {
      const p = ev.points?.[0];
      if (p && KINDS.includes(p.data.meta)) this.opts.onHoverStage?.(p.y);
    });
    this.div.on("plotly_unhover", () => this.opts.onHoverStage?.(null));
    this.div.on("plotly_relayout", () => this.drawOverlay());
    this.div.on("plotly_afterplot", () => this.drawOverlay());
  }

  setCursor(t) {
    this.cursor = t;
    this.drawOverlay();
  }

  axes() {
    const fl = this.div._fullLayout;
    if (!fl?.xaxis) return null;
    const x = (v) => fl.xaxis._offset + fl.xaxis.l2p(v);
    const y = (v) => fl.yaxis._offset + fl.yaxis.l2p(v);
    return { x, y, top: fl.yaxis._offset, bottom: fl.yaxis._offset + fl.yaxis._length,
      left: fl.xaxis._offset, right: fl.xaxis._offset + fl.xaxis._length };
  }

  drawOverlay() {
    const a = this.axes();
    if (!a) return;
    const c = this.overlay;
    const dpr = window.devicePixelRatio || 1;
    const [w, h] = [this.div.offsetWidth, this.div.offsetHeight];
    c.width = w * dpr;
    c.height = h * dpr;
    c.style.width = `${w}px`;
    c.style.height = `${h}px`;
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.save();
    ctx.beginPath();
    ctx.rect(a.left, a.top, a.right - a.left, a.bottom - a.top);
    ctx.clip();
    const now = this.drawSends(ctx, a);
    ctx.restore();
    const x = a.x(this.cursor);
    ctx.strokeStyle = "#d62728";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x, a.top - 6);
    ctx.lineTo(x, a.bottom);
    ctx.stroke();
    this.div.dataset.sendsNow = String(now);
  }

  // Arrows from each send (producer's end) to its receive (consumer's start); the ones in
  // flight at the cursor are drawn bold. Returns how many are in flight.
  drawSends(ctx, a) {
    const sends = this.extra?.sends ?? [];
    if (this.filter !== null || !sends.length) return 0;
    const t = this.cursor;
    let now = 0;
    for (const s of sends) {
      const live = s.send <= t && t <= s.recv;
      if (!live && sends.length > ARROW_LIMIT) continue;
      now += live ? 1 : 0;
      const down = s.dst_stage > s.src_stage;
      const [x1, y1] = [a.x(s.send), a.y(s.src_stage + (down ? 0.4 : -0.4))];
      const [x2, y2] = [a.x(s.recv), a.y(s.dst_stage + (down ? -0.4 : 0.4))];
      ctx.strokeStyle = ctx.fillStyle = live ? "#222" : "rgba(80,80,80,.28)";
      ctx.lineWidth = live ? 2 : 1;
      drawArrow(ctx, x1, y1, x2, y2, 7);
    }
    return now;
  }

  // PNG of the chart with the overlay (cursor and arrows) composited on top.
  async png() {
    const Plotly = await whenPlotly();
    const [w, h] = [this.div.offsetWidth, this.div.offsetHeight];
    const url = await Plotly.toImage(this.div, { format: "png", width: w, height: h, scale: 1 });
    const img = new Image();
    await new Promise((ok, fail) => Object.assign(img, { onload: ok, onerror: fail, src: url }));
    const canvas = Object.assign(document.createElement("canvas"), { width: w, height: h });
    const ctx = canvas.getContext("2d");
    ctx.drawImage(img, 0, 0);
    ctx.drawImage(this.overlay, 0, 0, w, h);
    return canvas.toDataURL("image/png");
  }
}
