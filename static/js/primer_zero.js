// The ZeRO card: per-GPU bytes at each stage (the cost model's), which slice each DP rank
// owns, and the selected stage's collectives in one step, all as the core computed them.
import { el, bytes, num } from "./fmt.js";
import { fill, tr } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const PARTS = [
  ["weights_bytes", "mem.weights", "weights"],
  ["grads_bytes", "mem.grads", "grads"],
  ["optimizer_bytes", "mem.optimizer", "optimizer"],
  ["activations_bytes", "mem.activations", null],
];

function table(z) {
  const head = el("tr");
  head.append(el("th", { scope: "col" }, tr("primer.zero.col.stage")));
  for (const [, label] of PARTS) head.append(el("th", { scope: "col" }, tr(label)));
  head.append(el("th", { scope: "col" }, tr("primer.zero.col.total")));
  const rows = z.stages.map((st) => {
    const tr_ = el("tr", { "data-zero": String(st.zero), class: st.zero === z.selected ? "selected" : "" });
    tr_.append(el("th", { scope: "row" }, `ZeRO-${st.zero}`));
    for (const [key, label, part] of PARTS) {
      const td = el("td", { "data-label": tr(label) }, bytes(st[key]));
      if (part) td.append(el("small", {}, st.partitioned[part] ? fill("primer.zero.split", { n: z.dp }) : tr("primer.zero.full")));
      tr_.append(td);
    }
    tr_.append(el("td", { "data-label": tr("primer.zero.col.total"), class: "total" }, bytes(st.total_bytes)));
    return tr_;
  });
  $("zero-table").replaceChildren(el("thead"), el("tbody"));
  $("zero-table").tHead.append(head);
  $("zero-table").tBodies[0].append(...rows);
}

function schedule(z) {
  const st = z.stages.find((s) => s.zero === z.selected);
  $("zero-schedule-title").textContent = fill("primer.zero.schedule_title", { z: z.selected });
  const items = st.schedule.map((e) => {
    const li = el("li", { "data-phase": e.phase, "data-collective": e.collective ?? "" });
    li.append(el("b", {}, tr(`primer.phase.${e.phase}`)), " ");
    if (e.collective) {
      li.append(`${tr(`primer.coll.${e.collective}`)} ${tr(`primer.what.${e.what}`)} · `);
      li.append(fill("primer.zero.row", { each: bytes(e.each_bytes), count: e.count, repeats: e.repeats, bytes: bytes(e.bytes) }));
    } else li.append(tr(`primer.what.${e.what}`));
    return li;
  });
  if (!items.length) items.push(el("li", {}, tr("primer.zero.none")));
  $("zero-schedule").replaceChildren(...items);
  $("zero-total").textContent = fill("primer.zero.total", { bytes: bytes(st.step_bytes) });
}

export function drawZero(primer) {
  const z = primer.zero;
  $("zero-intro").textContent = fill("primer.zero.intro", { n: z.dp, stage: primer.group.stage, z: z.selected });
  table(z);
  $("zero-shards").replaceChildren(...z.shards.map((s) => el("li", { "data-rank": String(s.rank) },
    fill("primer.zero.shard", { rank: s.rank, lo: num(s.first_param), hi: num(s.last_param), count: num(s.params) }))));
  schedule(z);
}
