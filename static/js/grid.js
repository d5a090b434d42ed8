// The rank grid on a canvas: one cell per GPU in node boxes, colour by an axis, highlights,
// zoom and pan. Canvas, not DOM: 16,384 ranks are 16,384 rects, drawn in one pass per colour.
import { cellOrigin, geometry, hit, nodeOrigin } from "./grid_geom.js";
import { bindInput } from "./grid_input.js";
import { CROSS, DIM, GROUP, categorical } from "./palette.js";

const DETAIL_PX = 5; // below this a cell is too small to point at: aggregate by node
// Axes beyond the article's three, in the layout only when used: cp, ep when > 1; etp and edp
// (MoE parallel folding's expert-TP and expert-DP groups) only when etp != tp.
const EXTRA = ["cp", "ep", "etp", "edp"];
const FOLD_DASH = [5, 3]; // the expert grid's groups are dashed, inside the dense outlines
// A canvas does not inherit the page's font stack: name the shipped CJK face too, or "节点 0"
// is boxes on a box without Chinese fonts (app.css's @font-face "Meshscope CJK").
const FAMILY = 'system-ui, "Noto Sans CJK SC", "Microsoft YaHei", "Meshscope CJK", sans-serif';

export class RankGrid {
  constructor(canvas, opts = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.opts = { maxCellPx: 56, maxHeightPx: 520, ...opts };
    this.view = { zoom: 1, ox: 0, oy: 0 };
    this.colorBy = "pp";
    this.selected = null;
    this.active = null; // flow view: Map rank -> colour of what it runs now
    this.ring = null; // Set of ranks to ring (hovered stage), colour in ringColor
    this.pulse = null; // {ranks:Set, phase:0..1}: TP all-reduce pulse
    this.comm = null; // flow view: {rings: [[ranks]], a2a: [ranks]}: CP rings, EP groups at work
    bindInput(this);
    canvas.meshscopeGrid = this; // on the element, not a global: tests find cells through it
    // A face listed for a canvas is fetched only once text needs it: draw again when it lands.
    const label = this.opts.nodeLabel;
    if (label && /[\u3000-\u9fff]/.test(label) && document.fonts) {
      document.fonts.load('12px "Meshscope CJK"', label).then(() => this.layout && this.draw());
    }
  }

  // A rank's cell centre in CSS pixels from the canvas's top-left (for tests and tooltips).
  cellCentre(rank) {
    const s = this.px();
    const [x, y] = this.toScreen(...cellOrigin(this.geom, rank));
    return [x + s / 2, y + s / 2];
  }

  setLayout(layout) {
    this.layout = layout;
    const world = layout.world_size;
    this.groupOf = {};
    this.axes = ["tp", "pp", "dp", ...EXTRA.filter((a) => layout.groups[a])];
    for (const axis of this.axes) {
      const of = new Int32Array(world);
      layout.groups[axis].forEach((members, gi) => members.forEach((r) => (of[r] = gi)));
      this.groupOf[axis] = of;
    }
    if (this.selected !== null && this.selected >= world) this.selected = null;
    this.resize();
  }

  resize() {
    const wrap = this.canvas.parentElement;
    const width = Math.max(160, wrap.clientWidth);
    const lay = this.layout;
    this.geom = geometry(
      lay.world_size, lay.gpus_per_node, width, this.opts.maxHeightPx, this.opts.maxCellPx,
    );
    const dpr = window.devicePixelRatio || 1;
    this.width = width;
    this.height = Math.max(40, this.geom.heightPx);
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(this.height * dpr);
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${this.height}px`;
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.clampView();
    this.draw();
  }

  // Group members of the selected rank, per axis; the pipeline in stage order.
  groupsOf(rank) {
    const g = this.layout.groups;
    const out = {};
    for (const axis of this.axes) out[axis] = g[axis][this.groupOf[axis][rank]];
    return out;
  }

  colourOf(r) {
    const info = this.layout.ranks[r];
    return categorical(this.colorBy === "node" ? info.node : info[this.colorBy] ?? 0);
  }

  px() {
    return this.geom.scale * this.view.zoom;
  }

  toScreen(ux, uy) {
    const s = this.px();
    return [ux * s + this.view.ox, uy * s + this.view.oy];
  }

  // Fill every cell, batching rects by colour so 16k cells cost a few dozen fills.
  fillCells(colourOf) {
    const { ctx } = this;
    const s = this.px();
    const buckets = new Map();
    for (let r = 0; r < this.layout.world_size; r += 1) {
      const c = colourOf(r);
      if (!buckets.has(c)) buckets.set(c, []);
      buckets.get(c).push(r);
    }
    const gap = s >= DETAIL_PX ? 0 : 0.15; // aggregated: close the gaps into one block
    for (const [colour, ranks] of buckets) {
      ctx.fillStyle = colour;
      ctx.beginPath();
      for (const r of ranks) {
        const [x, y] = this.toScreen(...cellOrigin(this.geom, r));
        ctx.rect(x, y, s * (1 + gap), s * (1 + gap));
      }
      ctx.fill();
    }
  }

  drawNodes() {
    const { ctx, geom } = this;
    const s = this.px();
    ctx.lineWidth = 1;
    ctx.strokeStyle = "#8a8a8a";
    ctx.fillStyle = "#f3f3f3";
    ctx.font = `${Math.min(12, Math.max(9, s * 0.45))}px ${FAMILY}`;
    for (let n = 0; n < geom.nodes; n += 1) {
      const [x, y] = this.toScreen(...nodeOrigin(geom, n));
      if (x > this.width || y > this.height || x + geom.nodeW * s < 0 || y + geom.nodeH * s < 0) {
        continue;
      }
      ctx.fillRect(x, y, geom.nodeW * s, geom.nodeH * s);
      if (s >= DETAIL_PX) ctx.strokeRect(x + 0.5, y + 0.5, geom.nodeW * s, geom.nodeH * s);
      if (s * 1.0 >= 12 && s >= 10) {
        ctx.fillStyle = "#555";
        ctx.fillText(`${this.opts.nodeLabel ?? "node"} ${n}`, x, y - 3);
        ctx.fillStyle = "#f3f3f3";
      }
    }
  }

  drawLabels(colourOf) {
    const s = this.px();
    if (s < 20) return;
    const { ctx } = this;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (let r = 0; r < this.layout.world_size; r += 1) {
      const [x, y] = this.toScreen(...cellOrigin(this.geom, r));
      if (x < -s || y < -s || x > this.width || y > this.height) continue;
      const info = this.layout.ranks[r];
      ctx.fillStyle = colourOf(r) === DIM ? "#8a8a8a" : "#fff";
      ctx.font = `bold ${Math.min(16, s * 0.36)}px ${FAMILY}`;
      ctx.fillText(String(r), x + s / 2, y + s * (s >= 40 ? 0.38 : 0.5));
      if (s >= 40) {
        ctx.font = `${Math.min(11, s * 0.22)}px ${FAMILY}`;
        const cp = info.cp === undefined ? "" : `,${info.cp}`;
        ctx.fillText(`${info.dp},${info.pp},${info.tp}${cp}`, x + s / 2, y + s * 0.72);
      }
    }
    ctx.textAlign = "start";
    ctx.textBaseline = "alphabetic";
  }

  // A rectangle inside each cell; ``inner`` pushes it further in (a ring inside the others).
  outline(ranks, colour, width, dash = null, inner = 0) {
    const { ctx } = this;
    const s = this.px();
    ctx.strokeStyle = colour;
    ctx.lineWidth = width;
    if (dash) ctx.setLineDash(dash);
    ctx.beginPath();
    for (const r of ranks) {
      const [x, y] = this.toScreen(...cellOrigin(this.geom, r));
      const inset = inner ? Math.min(width / 2 + inner, s / 3) : Math.min(width / 2, s / 4);
      ctx.rect(x + inset, y + inset, s - 2 * inset, s - 2 * inset);
    }
    ctx.stroke();
    if (dash) ctx.setLineDash([]);
  }

  // Pipeline links upstream -> downstream (a ring closes back to its first member, as KV
  // blocks go round the CP ring); dashed red where a link crosses a node boundary.
  drawPipeline(pipeline, colour = GROUP.pp, ring = false) {
    const { ctx } = this;
    const s = this.px();
    ctx.lineWidth = Math.max(1.5, Math.min(3, s / 12));
    const links = ring && pipeline.length > 2 ? pipeline.length : pipeline.length - 1;
    for (let i = 0; i < links; i += 1) {
      const [a, b] = [pipeline[i], pipeline[(i + 1) % pipeline.length]];
      const crosses = this.layout.ranks[a].node !== this.layout.ranks[b].node;
      const [x1, y1] = this.toScreen(...cellOrigin(this.geom, a)).map((v) => v + s / 2);
      const [x2, y2] = this.toScreen(...cellOrigin(this.geom, b)).map((v) => v + s / 2);
      ctx.strokeStyle = crosses ? CROSS : colour;
      ctx.setLineDash(crosses ? [6, 4] : []);
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.lineTo(x2, y2);
      ctx.stroke();
      const ang = Math.atan2(y2 - y1, x2 - x1);
      const head = Math.max(5, Math.min(10, s / 4));
      ctx.setLineDash([]);
      ctx.beginPath();
      ctx.moveTo(x2 - Math.cos(ang) * s * 0.3, y2 - Math.sin(ang) * s * 0.3);
      ctx.lineTo(x2 - Math.cos(ang - 0.5) * (s * 0.3 + head), y2 - Math.sin(ang - 0.5) * (s * 0.3 + head));
      ctx.lineTo(x2 - Math.cos(ang + 0.5) * (s * 0.3 + head), y2 - Math.sin(ang + 0.5) * (s * 0.3 + head));
      ctx.closePath();
      ctx.fillStyle = ctx.strokeStyle;
      ctx.fill();
    }
    ctx.setLineDash([]);
  }

  draw() {
    if (!this.layout) return;
    const { ctx } = this;
    ctx.clearRect(0, 0, this.width, this.height);
    this.drawNodes();
    const sel = this.selected;
    const showGroups = sel !== null && this.opts.groupsOnSelect !== false;
    const groups = showGroups ? this.groupsOf(sel) : null;
    const members = groups ? new Set(Object.values(groups).flat()) : null;
    const colourOf = (r) => {
      if (this.active) return this.active.get(r) ?? DIM;
      return members && !members.has(r) ? DIM : this.colourOf(r);
    };
    this.fillCells(colourOf);
    this.drawLabels(colourOf);
    const w = Math.max(2, Math.min(4, this.px() / 8));
    if (groups) {
      this.outline(groups.dp, GROUP.dp, w);
      this.outline(groups.tp, GROUP.tp, w);
      if (groups.ep) this.outline(groups.ep, GROUP.ep, Math.max(1.5, w - 1));
      // Expert-TP and expert-DP groups share only the selected rank: one inner dashed ring.
      for (const a of ["etp", "edp"]) {
        if (groups[a]) this.outline(groups[a], GROUP[a], w, FOLD_DASH, w);
      }
      if (groups.cp) this.drawPipeline(groups.cp, GROUP.cp, true);
      this.drawPipeline(groups.pp);
      this.outline([sel], GROUP.self, w + 1);
    }
    if (sel !== null && !groups) this.outline([sel], GROUP.self, w + 1);
    if (this.ring) this.outline(this.ring, this.opts.ringColor ?? GROUP.self, w);
    if (this.pulse) this.outline(this.pulse.ranks, `rgba(242, 180, 0, ${1 - this.pulse.phase})`, w + 2);
    if (this.comm) {
      if (this.comm.a2a.length) this.outline(this.comm.a2a, GROUP.ep, Math.max(1.5, w - 1));
      for (const ring of this.comm.rings) this.drawPipeline(ring, GROUP.cp, true);
    }
    this.publish(groups);
  }

  // State for tests and the selection panel, as data attributes on the canvas.
  publish(groups) {
    const d = this.canvas.dataset;
    d.world = this.layout.world_size;
    d.selected = this.selected ?? "";
    d.tp = groups ? groups.tp.join(",") : "";
    d.pp = groups ? groups.pp.join(",") : "";
    d.dp = groups ? groups.dp.join(",") : "";
    for (const a of EXTRA) if (groups?.[a]) d[a] = groups[a].join(","); else delete d[a];
    d.aggregated = this.px() < DETAIL_PX ? "1" : "0";
    d.cellPx = this.px().toFixed(1);
    d.drawn = String(Number(d.drawn || 0) + 1);
  }

  hitAt(clientX, clientY) {
    const rect = this.canvas.getBoundingClientRect();
    const s = this.px();
    const ux = (clientX - rect.left - this.view.ox) / s;
    const uy = (clientY - rect.top - this.view.oy) / s;
    return hit(this.geom, ux, uy);
  }

  isAggregated() {
    return this.px() < DETAIL_PX;
  }

  zoomAt(factor, sx, sy) {
    const maxZoom = Math.max(1, 64 / this.geom.scale);
    const zoom = Math.min(maxZoom, Math.max(1, this.view.zoom * factor));
    const k = zoom / this.view.zoom;
    this.view = { zoom, ox: sx - (sx - this.view.ox) * k, oy: sy - (sy - this.view.oy) * k };
    this.clampView();
    this.draw();
  }

  // Keep some of the grid on screen: panning stops at the edges.
  clampView() {
    const s = this.px();
    const w = this.geom.w * s;
    const h = this.geom.h * s;
    const v = this.view;
    v.ox = Math.min(0, Math.max(Math.min(0, this.width - w), v.ox));
    v.oy = Math.min(0, Math.max(Math.min(0, this.height - h), v.oy));
  }

  // Zoom so one node fills a good part of the view: how an aggregated box opens up.
  zoomToNode(node) {
    const target = Math.max(1, Math.min(64 / this.geom.scale, 28 / this.geom.scale));
    const [ux, uy] = nodeOrigin(this.geom, node);
    const s = this.geom.scale * target;
    const cx = (ux + this.geom.nodeW / 2) * s;
    const cy = (uy + this.geom.nodeH / 2) * s;
    this.view = { zoom: target, ox: this.width / 2 - cx, oy: this.height / 2 - cy };
    this.clampView();
    this.draw();
  }

  resetZoom() {
    this.view = { zoom: 1, ox: 0, oy: 0 };
    this.draw();
  }
}
