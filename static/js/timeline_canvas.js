// The comparison's pipeline timelines on a canvas: one row per pipeline rank, F/B/W and the
// step's tail, idle hatched as bubble, the TP pulse strip; hover names a block, drag zooms
// the time axis and double-click resets it, linked across every timeline of the page.
// Canvas, not SVG: the schedules preset at pp=16 x 256 micro-batches is ~100,000 blocks,
// which as Plotly bars was 338K SVG nodes and 53 s to draw.
import { KIND } from "./palette.js";
import { tr } from "./state.js";
import { label, shade, tpTime } from "./timeline.js";

const M = { l: 70, r: 12, t: 14, b: 44 }; // the margins the Plotly timeline had
const LABEL_LIMIT = 3000;
const BAR = 0.8; // a block's height as a share of its row

// Ticks at 1, 2 or 5 times a power of ten, about every 90 px.
function ticks(lo, hi, px) {
  const raw = (hi - lo) / Math.max(2, Math.floor(px / 90));
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  const step = [1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw) ?? 10 * p;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
  return out;
}

function hatch(ctx) {
  const tile = Object.assign(document.createElement("canvas"), { width: 7, height: 7 });
  const c = tile.getContext("2d");
  c.fillStyle = "#f4f4f4";
  c.fillRect(0, 0, 7, 7);
  c.strokeStyle = "#c9c9c9";
  c.beginPath();
  c.moveTo(0, 7);
  c.lineTo(7, 0);
  c.stroke();
  return ctx.createPattern(tile, "repeat");
}

export class CanvasTimeline {
  constructor(div, opts = {}) {
    this.div = div;
    this.opts = opts; // onHover(t | null), onZoom([lo, hi] | null)
    this.canvas = document.createElement("canvas");
    // The linked hover line on a canvas of its own: moving it never redraws the blocks.
    this.overlay = Object.assign(document.createElement("canvas"), { className: "tl-overlay" });
    this.tip = Object.assign(document.createElement("div"), { className: "tl-tip", hidden: true });
    div.append(this.canvas, this.overlay, this.tip);
    div.meshscopeTimeline = this; // on the element, not a global: tests read it
    this.marker = null;
    this.bind();
    new ResizeObserver(() => this.width !== div.clientWidth && this.draw()).observe(div);
  }

  setData(member, end) {
    const tl = member.timeline;
    this.tl = tl;
    this.chunks = member.schedule.virtual_stages;
    this.rows = member.layout.sizes.pp;
    this.full = [0, end * 1.01];
    this.range = this.full;
    const b = tl.bars;
    // Per row, the block indices by start time: hover finds a block by binary search.
    this.byRow = Array.from({ length: this.rows }, () => []);
    b.stage.forEach((s, i) => this.byRow[s]?.push(i));
    for (const idx of this.byRow) idx.sort((i, j) => b.start[i] - b.start[j]);
    Object.assign(this.div.dataset, { events: String(b.stage.length),
      rows: [...Array(this.rows).keys()].join(","), range: String(this.full[1]) });
    this.draw();
  }

  // A longer shared axis (a later column of a streamed comparison ends later): same blocks.
  setEnd(end) {
    this.full = [0, end * 1.01];
    this.range = this.full;
    this.div.dataset.range = String(this.full[1]);
    this.draw();
  }

  zoom(range) {
    this.range = range ?? this.full;
    this.div.dataset.zoom = range ? range.map((v) => v.toPrecision(6)).join(",") : "";
    this.draw();
  }

  x(t) { return M.l + ((t - this.range[0]) / (this.range[1] - this.range[0])) * (this.width - M.l - M.r); }
  t(x) { return this.range[0] + ((x - M.l) / (this.width - M.l - M.r)) * (this.range[1] - this.range[0]); }
  y(row) { return M.t + (row + 0.5) * this.rowPx; }

  draw() {
    if (!this.tl) return;
    const dpr = window.devicePixelRatio || 1;
    this.width = this.div.clientWidth || 600;
    this.rowPx = this.rows > 16 ? 18 : 34;
    this.height = Math.min(640, 110 + this.rows * this.rowPx);
    this.rowPx = (this.height - M.t - M.b) / this.rows;
    const c = this.canvas;
    [c.width, c.height] = [Math.round(this.width * dpr), Math.round(this.height * dpr)];
    [c.style.width, c.style.height] = [`${this.width}px`, `${this.height}px`];
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = '11px system-ui, "Noto Sans CJK SC", "Microsoft YaHei", "Meshscope CJK", sans-serif';
    this.drawRows(ctx);
    ctx.save();
    ctx.beginPath();
    ctx.rect(M.l, M.t, this.width - M.l - M.r, this.height - M.t - M.b);
    ctx.clip();
    this.drawBars(ctx);
    ctx.restore();
    this.drawAxis(ctx);
    this.drawMarker();
    this.div.dataset.drawn = String((Number(this.div.dataset.drawn) || 0) + 1);
  }

  drawRows(ctx) {
    ctx.fillStyle = hatch(ctx);
    const [x0, x1] = [this.x(0), this.x(this.full[1] / 1.01)];
    for (let r = 0; r < this.rows; r += 1) {
      const y = this.y(r) - (BAR * this.rowPx) / 2;
      ctx.fillRect(Math.max(M.l, x0), y, Math.min(this.width - M.r, x1) - Math.max(M.l, x0), BAR * this.rowPx);
    }
  }

  drawBars(ctx) {
    const b = this.tl.bars;
    const n = b.stage.length;
    const h = BAR * this.rowPx;
    const text = n <= LABEL_LIMIT;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (let i = 0; i < n; i += 1) {
      const kind = b.kind[i];
      const [x0, x1] = [this.x(b.start[i]), this.x(b.end[i])];
      if (x1 < M.l || x0 > this.width) continue;
      const y = this.y(b.stage[i]);
      if (kind === "dp_hidden") { // hidden under the backward: a strip along the bottom
        ctx.fillStyle = KIND.dp;
        ctx.fillRect(x0, y + h * 0.28, Math.max(0.5, x1 - x0), h * 0.22);
        continue;
      }
      ctx.fillStyle = shade(KIND[kind] ?? KIND.idle, b.chunk[i], this.chunks);
      ctx.fillRect(x0, y - h / 2, Math.max(0.5, x1 - x0 - (text ? 0.6 : 0)), h);
      const tp = kind === "F" || kind === "B" ? tpTime(this.tl, b.stage[i], kind) : 0;
      if (tp > 0) { // the TP all-reduce inside the block, a dark strip at its end
        const xs = this.x(b.end[i] - Math.min(tp, b.end[i] - b.start[i]));
        ctx.fillStyle = KIND.tp;
        ctx.fillRect(xs, y - h * 0.29, x1 - xs, h * 0.22);
      }
      const name = text ? label({ kind, microbatch: b.microbatch[i], chunk: b.chunk[i] }, this.chunks) : "";
      if (name && ctx.measureText(name).width + 4 < x1 - x0) {
        ctx.fillStyle = "#fff";
        ctx.fillText(name, (x0 + x1) / 2, y);
      }
    }
  }

  drawMarker() {
    const o = this.overlay;
    const dpr = window.devicePixelRatio || 1;
    [o.width, o.height] = [this.canvas.width, this.canvas.height];
    [o.style.width, o.style.height] = [this.canvas.style.width, this.canvas.style.height];
    const ctx = o.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    if (this.marker === null || this.marker < this.range[0] || this.marker > this.range[1]) return;
    ctx.strokeStyle = "#d62728";
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    ctx.moveTo(this.x(this.marker), M.t);
    ctx.lineTo(this.x(this.marker), this.height - M.b);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  drawAxis(ctx) {
    ctx.fillStyle = "#444";
    ctx.strokeStyle = "#999";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (let r = 0; r < this.rows; r += 1) ctx.fillText(`${tr("stage")} ${r}`, M.l - 6, this.y(r));
    const bottom = this.height - M.b;
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (const v of ticks(this.range[0], this.range[1], this.width - M.l - M.r)) {
      const x = this.x(v);
      ctx.beginPath();
      ctx.moveTo(x, bottom);
      ctx.lineTo(x, bottom + 4);
      ctx.stroke();
      ctx.fillText(String(Number(v.toPrecision(6))), x, bottom + 6);
    }
    ctx.fillText(tr(this.tl.units === "abstract" ? "units.abstract" : "units.s"), (M.l + this.width - M.r) / 2, bottom + 24);
  }

  // The block under a point: its row from y, then the last block starting before t.
  blockAt(px, py) {
    const row = Math.floor((py - M.t) / this.rowPx);
    if (row < 0 || row >= this.rows || px < M.l) return null;
    const t = this.t(px);
    const idx = this.byRow[row];
    const b = this.tl.bars;
    let [lo, hi] = [0, idx.length - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (b.start[idx[mid]] <= t) lo = mid; else hi = mid - 1;
    }
    for (let k = lo; k >= 0 && k > lo - 4; k -= 1) { // overlapping tail strips: look back a little
      const i = idx[k];
      if (i !== undefined && b.start[i] <= t && t <= b.end[i]) return i;
    }
    return null;
  }

  tipText(i) {
    const b = this.tl.bars;
    const kind = tr(`kind.${b.kind[i]}`);
    const chunk = this.chunks > 1 ? ` · ${tr("chunk")} ${b.chunk[i]}` : "";
    const mb = b.kind[i] === "F" || b.kind[i] === "B" || b.kind[i] === "W" ? `\n${tr("microbatch")} ${b.microbatch[i]}${chunk}` : "";
    return `${tr("stage")} ${b.stage[i]} · ${kind}${mb}\n${b.start[i].toPrecision(4)} → ${b.end[i].toPrecision(4)}`;
  }

  bind() {
    const at = (ev) => {
      const r = this.canvas.getBoundingClientRect();
      return [ev.clientX - r.left, ev.clientY - r.top];
    };
    const el = this.overlay; // on top: it takes the pointer
    el.addEventListener("mousemove", (ev) => {
      const [px, py] = at(ev);
      if (this.drag) this.drag[1] = px;
      const i = this.blockAt(px, py);
      this.tip.hidden = i === null;
      if (i !== null) {
        this.tip.textContent = this.tipText(i);
        Object.assign(this.tip.style, { left: `${Math.min(px + 12, this.width - 180)}px`, top: `${py + 12}px` });
      }
      this.opts.onHover?.(px >= M.l ? this.t(px) : null);
    });
    el.addEventListener("mouseleave", () => {
      this.tip.hidden = true;
      this.opts.onHover?.(null);
    });
    el.addEventListener("mousedown", (ev) => { this.drag = [at(ev)[0], at(ev)[0]]; });
    el.addEventListener("mouseup", () => {
      const d = this.drag;
      this.drag = null;
      if (!d || Math.abs(d[1] - d[0]) < 5) return;
      const range = [this.t(Math.min(...d)), this.t(Math.max(...d))];
      (this.opts.onZoom ?? ((r) => this.zoom(r)))(range);
    });
    el.addEventListener("dblclick", () => (this.opts.onZoom ?? ((r) => this.zoom(r)))(null));
  }

  setMarker(t) {
    this.marker = t;
    if (this.tl) this.drawMarker();
  }
}
