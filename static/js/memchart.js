// Memory per GPU by stage: stacked bars against the HBM line, as inline SVG. Small enough
// not to need Plotly, so the overview never waits for a 4.8 MB script.
import { CROSS } from "./palette.js";
import { tr } from "./state.js";

const NS = "http://www.w3.org/2000/svg";
const GIB = 1024 ** 3; // display unit only
const M = { l: 48, r: 10, t: 18, b: 28 };

function svg(tag, attrs = {}, text = "") {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

// A round tick step near range/5: 1, 2 or 5 times a power of ten.
function tickStep(range) {
  const raw = range / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw);
}

function axis(root, y, top, width) {
  for (let v = 0; v <= top + 1e-9; v += tickStep(top)) {
    root.append(svg("line", { x1: M.l, x2: width - M.r, y1: y(v), y2: y(v), class: "tick" }));
    root.append(svg("text", { x: M.l - 6, y: y(v) + 4, "text-anchor": "end" }, `${+v.toFixed(1)}`));
  }
  root.append(svg("text", { x: 4, y: M.t - 6 }, "GiB"));
}

export function memoryChart(box, mem, parts) {
  const width = Math.max(320, box.clientWidth || 600);
  const height = 240;
  const stages = mem.per_stage;
  const cap = mem.capacity_bytes / GIB;
  const top = Math.max(cap || 0, ...stages.map((s) => s.total_bytes / GIB)) * 1.12 || 1;
  const y = (v) => M.t + (height - M.t - M.b) * (1 - v / top);
  const band = (width - M.l - M.r) / stages.length;
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "memchart" });
  axis(root, y, top, width);
  const every = Math.ceil(stages.length / 16); // keep stage labels readable for deep pipelines
  stages.forEach((s, i) => {
    const x = M.l + i * band + band * 0.15;
    let base = 0;
    for (const [key, label, colour] of parts) {
      const v = (s[key] ?? 0) / GIB;
      const rect = svg("rect", { x, width: band * 0.7, y: y(base + v), height: y(base) - y(base + v), fill: colour });
      rect.append(svg("title", {}, `${tr("stage")} ${s.stage} · ${tr(label)}: ${v.toFixed(2)} GiB`));
      root.append(rect);
      base += v;
    }
    const over = Number.isFinite(cap) && s.total_bytes / GIB > cap;
    if (over) root.append(svg("text", { x: x + band * 0.35, y: y(base) - 4, "text-anchor": "middle", class: "oom-mark" }, "OOM"));
    if (i % every === 0) {
      const attrs = { x: x + band * 0.35, y: height - 10, "text-anchor": "middle", class: over ? "oom-mark" : "" };
      root.append(svg("text", attrs, `${tr("stage")} ${s.stage}`));
    }
  });
  if (Number.isFinite(cap)) {
    root.append(svg("line", { x1: M.l, x2: width - M.r, y1: y(cap), y2: y(cap), stroke: CROSS, "stroke-dasharray": "6 4" }));
    root.append(svg("text", { x: width - M.r, y: y(cap) - 4, "text-anchor": "end", fill: CROSS }, `${tr("mem.capacity")} ${cap.toFixed(0)} GiB`));
  }
  box.replaceChildren(root);
}
