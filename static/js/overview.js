// Overview page: rank grid, selection, order comparison, summary cards.
import { renderCards } from "./cards.js";
import { bindForm, bindHeader, showErrors } from "./controls.js";
import { fillCopyAsSlots } from "./copy_as.js";
import { el } from "./fmt.js";
import { RankGrid } from "./grid.js";
import { showTip } from "./grid_input.js";
import { renderOrders } from "./orders.js";
import { GROUP, categorical } from "./palette.js";
import { renderSelection, tipHtml } from "./rankinfo.js";
import { initial, refetch, setParams, tr } from "./state.js";

const wrap = document.getElementById("grid-wrap");
const tip = document.getElementById("grid-tip");
const panel = document.getElementById("selection");
const rankInput = document.getElementById("rank-input");
const colorBy = document.getElementById("color-by");
const start = initial();
let model = null;
let seq = 0;

const grid = new RankGrid(document.getElementById("grid"), {
  nodeLabel: tr("node"),
  onHover: (h, ev) => showTip(tip, wrap, tipHtml(grid, h), ev),
  onClick: (h) => select(h?.rank ?? null),
});

function select(rank) {
  grid.selected = rank;
  grid.draw();
  renderSelection(panel, grid, rank);
  rankInput.value = rank ?? "";
  setParams({ rank: rank ?? "" });
  showErrors({});
}

function legend() {
  const box = document.getElementById("grid-legend");
  box.replaceChildren();
  const axis = grid.colorBy;
  const count = axis === "node" ? model.layout.nodes : model.layout.sizes[axis] ?? 1;
  const label = axis === "node" ? tr("node") : axis;
  for (let i = 0; i < Math.min(count, 16); i += 1) {
    const item = el("span", { class: "item" });
    item.append(el("i", { style: `background:${categorical(i)}` }), `${label} ${i}`);
    box.append(item);
  }
  if (count > 16) box.append(el("span", { class: "item" }, `… ${count}`));
  foldKey(box);
}

// MoE parallel folding: name the dashed expert-TP and expert-DP outlines a click draws, and
// whether their groups leave a node. The core sends them only when etp != tp, so a default
// page's legend is as it was.
function foldKey(box) {
  const lay = model.layout;
  const axes = ["etp", "edp"].filter((a) => lay.groups[a]);
  if (!axes.length) return;
  box.append(el("span", { class: "fold-break", style: "flex-basis:100%;height:0" }));
  for (const axis of axes) {
    const where = tr(lay.crosses_node[axis] ? "crosses" : "within");
    const item = el("span", { class: "item fold", "data-axis": axis });
    const swatch = `box-sizing:border-box;background:transparent;border:2px dashed ${GROUP[axis]}`;
    item.append(el("i", { style: swatch }), `${tr(`group.${axis}`)}: ${where}`);
    box.append(item);
  }
}

// cp and ep are choices only while the scenario uses them (the layout has them when > 1).
function colourChoices(sizes) {
  for (const axis of ["cp", "ep"]) {
    const option = colorBy.querySelector(`option[value="${axis}"]`);
    if (sizes[axis] && !option) {
      colorBy.querySelector('option[value="node"]').before(el("option", { value: axis }, axis));
    } else if (!sizes[axis] && option) {
      option.remove();
    }
  }
  if (!colorBy.querySelector(`option[value="${grid.colorBy}"]`)) grid.colorBy = colorBy.value;
}

function draw(next) {
  showErrors(next.errors);
  document.body.dataset.state = next.model ? "ok" : "error";
  if (!next.model) return;
  model = next.model;
  const world = model.layout.world_size;
  if (grid.selected !== null && grid.selected >= world) grid.selected = null;
  colourChoices(model.layout.sizes);
  grid.setLayout(model.layout);
  document.getElementById("grid-aggregated").hidden = !grid.isAggregated();
  renderSelection(panel, grid, grid.selected);
  legend();
  const current = model.layout.full_order ?? model.layout.order; // cp, ep named when > 1
  renderOrders(document.getElementById("orders"), next.extra.orders, current, (order) => {
    const select = document.querySelector('#controls [name="order"]');
    const known = [...select.options].some((o) => o.value === order);
    if (!known) select.append(el("option", { value: order }, order)); // a 4- or 5-axis order
    select.value = order;
    setParams({ order });
    update();
  });
  document.body.dataset.ready = "overview";
  performance.mark("meshscope:grid-drawn");
  renderCards(model);
}

async function update() {
  const mine = ++seq;
  const next = await refetch("/api/orders");
  if (mine === seq) draw(next); // a slower, older answer never overwrites a newer one
}

rankInput.addEventListener("change", () => {
  const text = rankInput.value.trim();
  const rank = Number(text);
  if (text === "") return select(null);
  if (!Number.isInteger(rank) || rank < 0 || !model || rank >= model.layout.world_size) {
    return showErrors({ rank: `0 ≤ rank < ${model?.layout.world_size ?? "?"}` });
  }
  select(rank);
});
colorBy.addEventListener("change", () => {
  grid.colorBy = colorBy.value;
  setParams({ color: colorBy.value });
  grid.draw();
  legend();
});
document.getElementById("reset-zoom").addEventListener("click", () => grid.resetZoom());
panel.addEventListener("click", (ev) => ev.target.id === "clear-selection" && select(null));

grid.colorBy = start.state.color;
grid.selected = start.state.rank;
bindHeader();
fillCopyAsSlots(); // "Copy as" this scenario: read from the URL at each press
bindForm(update);
draw(start);
