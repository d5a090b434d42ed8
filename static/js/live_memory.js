// The live page's memory table: per rank, the drawn step's measured peak allocated and
// reserved beside the cost model's figures for its stage (app.live.run_memory). Every
// number, ratio and "why absent" comes from the server; this only lays them out.
import { bytes, el } from "./fmt.js";
import { fill, tr } from "./i18n.js";

const HEAD = ["rank", "stage", "allocated_measured", "allocated_predicted", "reserved_measured",
  "reserved_predicted", "total_predicted"];
const ABSENT = { cpu: "live.memory.not_on_cpu", not_reported: "live.memory.not_reported" };

// A measured cell: the bytes and their ratio to the prediction, or why there are none.
function measured(value, ratio, absent) {
  if (value === null || value === undefined) {
    return el("td", { class: "absent" }, absent ? tr(ABSENT[absent]) : "—");
  }
  const times = ratio === null || ratio === undefined ? "" : ` (×${ratio.toFixed(2)})`;
  return el("td", {}, bytes(value) + times);
}

function row(r, rss) {
  const p = r.predicted;
  const cells = [
    el("td", {}, String(r.rank)), el("td", {}, String(r.stage)),
    measured(r.allocated_bytes, r.allocated_ratio, r.absent), el("td", {}, bytes(p.allocated_bytes)),
    measured(r.reserved_bytes, r.reserved_ratio, r.absent), el("td", {}, bytes(p.reserved_bytes)),
    el("td", {}, bytes(p.total_bytes)),
  ];
  if (rss) cells.push(el("td", {}, bytes(r.rss_bytes)));
  const tr_ = el("tr");
  tr_.dataset.rank = String(r.rank);
  tr_.append(...cells);
  return tr_;
}

export function drawMemory(table, hint, cpuHint, m) {
  const rss = m.device === "cpu"; // the host RSS column: a CPU run's only memory figure
  const head = el("tr");
  const names = HEAD.map((k) => `live.memory.${k}`).concat(rss ? ["live.memory.rss"] : []);
  head.append(...names.map((k) => el("th", {}, tr(k))));
  table.replaceChildren(head, ...m.per_rank.map((r) => row(r, rss)));
  table.dataset.device = m.device;
  table.dataset.measured = String(m.measured);
  const p = m.predicted;
  hint.textContent = p.error === undefined
    ? fill("live.memory.hint", { hw: p.hardware })
    : fill("live.memory.error", { error: p.error });
  cpuHint.hidden = !rss;
}
