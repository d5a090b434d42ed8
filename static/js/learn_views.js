// The guided path's other widgets, drawn by the views' own modules: the rank grid of the
// overview (grid.js) and the pipeline timeline of the flow view (timeline.js), fed the
// layout and timeline the core computed for the step's scenario.
import { el, pct } from "./fmt.js";
import { fill, tr } from "./i18n.js";
import { RankGrid } from "./grid.js";
import { KIND } from "./palette.js";
import { Timeline } from "./timeline.js";

const $ = (id) => document.getElementById(id);

export function drawGrid(w) {
  const lay = w.layout;
  const grid = new RankGrid($("learn-grid"), {
    maxCellPx: 44, maxHeightPx: 260, nodeLabel: tr("node"),
    onClick: (h) => pick(grid, h && h.rank !== null && h.rank !== undefined ? h.rank : null),
  });
  grid.colorBy = "tp";
  grid.setLayout(lay);
  for (const b of document.querySelectorAll("[data-color]")) {
    b.addEventListener("click", () => {
      grid.colorBy = b.dataset.color;
      for (const o of document.querySelectorAll("[data-color]")) o.setAttribute("aria-pressed", String(o === b));
      grid.draw();
    });
  }
  return fill("learn.grid.caption", { world: lay.world_size, nodes: lay.nodes, per: lay.gpus_per_node });
}

function pick(grid, rank) {
  grid.selected = rank;
  grid.draw();
  const r = rank === null ? null : grid.layout.ranks[rank];
  $("learn-coord").textContent = r ? fill("learn.grid.coord", r) : tr("learn.grid.pick");
}

export async function drawTimeline(w, keys) {
  const tl = new Timeline($("learn-timeline"), $("learn-timeline-overlay"));
  await tl.setData(w.view, null, null);
  const b = w.bubble;
  $("learn-bubble").textContent = fill("learn.bubble", { p: b.p, m: b.m, formula: pct(b.formula), simulated: pct(b.simulated) });
  keys.replaceChildren(...[["F", KIND.F], ["B", KIND.B], ["idle", KIND.idle]].map(([k, colour]) => {
    const swatch = el("i", { class: k === "idle" ? "pattern" : "" });
    swatch.style.background = colour;
    const item = el("span");
    item.append(swatch, tr(`kind.${k}`));
    return item;
  }));
  return w.label;
}
