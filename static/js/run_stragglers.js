// The run page's stragglers: GET /api/runs/{run}/stragglers (app/core/traces/stragglers.py)
// listed in a small panel and outlined on the rank grid (the heatmap) and the rank-state
// squares. A slow rank (a slow GPU) is outlined solid, the ranks of a slow link dashed.
import { seconds } from "./fmt.js";
import { fill, tr } from "./i18n.js";
import { whenPlotly } from "./plot.js";

const RANK_LINE = { color: "#0d47a1", width: 4 };
const LINK_LINE = { color: "#0d47a1", width: 3, dash: "dash" };

// The window's findings, or null when there are none to fetch yet (no step, busy: 429).
export async function fetchStragglers(run, step) {
  const res = await fetch(`/api/runs/${encodeURIComponent(run)}/stragglers?step=${step}`);
  return res.ok ? res.json() : null;
}

const ratio = (r) => (r === null ? "∞" : r.toFixed(2));
const steps = (list) => (list.length > 1 ? `${list[0]}–${list[list.length - 1]}` : String(list[0] ?? ""));

// One finding as a sentence (the whole-run card, run_whole.js, words its findings alike).
export function sentence(s) {
  const phase = tr(`live.straggler.phase.${s.phase}`);
  const excess = seconds(s.excess_s);
  if (s.cause === "rank") {
    return fill("live.straggler.rank", { rank: s.ranks[0], stage: s.stage, phase, excess, ratio: ratio(s.ratio) });
  }
  return fill("live.straggler.link", { ranks: s.ranks.join(", "), axis: s.axis.toUpperCase(), phase, excess, ratio: ratio(s.ratio) });
}

// The panel: one line per finding, largest first as the server sorts them. info: the run's
// (cp only when > 1): a CP run's stage peers are DP x CP x TP.
export function showStragglers(listEl, hintEl, data, info) {
  const found = data.stragglers;
  const items = found.length ? found.map(sentence) : [fill("live.stragglers_none", { steps: steps(data.steps) })];
  listEl.replaceChildren(...items.map((text, i) => {
    const li = document.createElement("li");
    li.textContent = text;
    const s = found[i];
    if (s) Object.assign(li.dataset, { cause: s.cause, phase: s.phase, ranks: s.ranks.join(",") });
    return li;
  }));
  listEl.dataset.step = String(data.step);
  listEl.dataset.slowRanks = found.filter((s) => s.cause === "rank").map((s) => s.ranks[0]).join(",");
  const hint = info?.cp > 1 ? "live.stragglers_hint.cp" : "live.stragglers_hint";
  hintEl.textContent = fill(hint, { steps: steps(data.steps) });
}

// Which ranks to outline, and how: a slow rank wins over a link it belongs to.
function marks(data) {
  const out = new Map();
  for (const s of data?.stragglers ?? []) {
    for (const r of s.ranks) if (!out.has(r) || s.cause === "rank") out.set(r, s.cause);
  }
  return out;
}

// Outlines on the heatmap drawn by live_charts.drawHeatmap (its cells: h.ranks[row][col]);
// call again after each redraw, which drops them.
export async function markHeatmap(div, analysis, data) {
  const m = marks(data);
  const shapes = [];
  analysis.heatmap.ranks.forEach((row, i) => row.forEach((rank, j) => {
    if (!m.has(rank)) return;
    shapes.push({ type: "rect", xref: "x", yref: "y", x0: j - 0.5, x1: j + 0.5, y0: i - 0.5, y1: i + 0.5,
      line: m.get(rank) === "rank" ? RANK_LINE : LINK_LINE, fillcolor: "rgba(0,0,0,0)" });
  }));
  const Plotly = await whenPlotly();
  await Plotly.relayout(div, { shapes });
  div.dataset.stragglers = [...m.keys()].sort((a, b) => a - b).join(",");
}

// The rank-state squares (live_ranks.drawRankStates): data-straggler on the marked ones.
export function markRankStates(el, data) {
  const m = marks(data);
  for (const cell of el.children) {
    const cause = m.get(Number(cell.dataset.rank));
    if (cause) cell.dataset.straggler = cause;
    else delete cell.dataset.straggler;
  }
}
