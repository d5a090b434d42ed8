// Per pipeline stage: its layers and its predicted F+B time beside the slowest stage's. The
// numbers are the core's (stage_balance in the view JSON, app/core/cost/view.py); this file
// only lays them out, and the bar's length is the core's of_slowest.
import { el, pct, seconds } from "./fmt.js";
import { tr } from "./state.js";

const MAX_ROWS = 32;
const BAR_PX = 80;

function layersCell(cell, st) {
  // A rank with several chunks shows each chunk's layers: 8 (4+4).
  const chunks = st.layers.length > 1 ? ` (${st.layers.join("+")})` : "";
  cell.append(String(st.total_layers) + chunks);
  for (const [flag, key] of [[st.embedding, "balance.embedding"], [st.head, "balance.head"]]) {
    if (flag) cell.append(el("span", { class: "muted" }, ` ${tr(key)}`));
  }
}

function barCell(cell, st) {
  const width = Math.round(BAR_PX * st.of_slowest);
  const bar = el("span", {
    style: `display:inline-block;height:10px;width:${width}px;background:var(--pp);margin-right:6px;vertical-align:middle`,
  });
  cell.append(bar, pct(st.of_slowest, 0));
}

export function renderStageBalance(node, model) {
  if (!node) return;
  node.replaceChildren();
  const sb = model.stage_balance;
  if (!sb?.per_stage?.length) {
    node.append(el("p", { class: "muted na" }, tr("na")));
    return;
  }
  node.append(el("p", { class: "muted" }, tr(sb.given ? "balance.given" : "balance.default")));
  const table = el("table", { class: "comm stage-balance" });
  const head = table.createTHead().insertRow();
  for (const key of ["stage", "balance.layers", "balance.time", "balance.of_slowest"]) {
    head.append(el("th", {}, tr(key)));
  }
  const rows = table.createTBody();
  for (const st of sb.per_stage.slice(0, MAX_ROWS)) {
    const row = rows.insertRow();
    row.dataset.stage = String(st.stage);
    if (st.stage === sb.slowest_stage) row.classList.add("slowest");
    row.insertCell().textContent = String(st.stage);
    layersCell(row.insertCell(), st);
    row.insertCell().textContent = seconds(st.fb_s);
    barCell(row.insertCell(), st);
  }
  node.append(table);
  const more = sb.per_stage.length - MAX_ROWS;
  if (more > 0) node.append(el("p", { class: "muted" }, `… ${sb.per_stage.length}`));
  node.append(el("p", { class: "muted" }, `${tr("balance.imbalance")}: ${pct(sb.imbalance)}`));
  node.dataset.layers = sb.per_stage.map((st) => st.total_layers).join(",");
  node.dataset.ofSlowest = sb.per_stage.map((st) => st.of_slowest).join(",");
}
