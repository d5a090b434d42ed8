// Summary cards of the overview. They draw the core's numbers and never compute one:
// a key the core does not send yet shows a plain "not available" line instead.
import { bandNode } from "./band.js";
import { bytes, el, num, pct, seconds } from "./fmt.js";
import { memoryChart } from "./memchart.js";
import { KIND } from "./palette.js";
import { renderStageBalance } from "./stage_balance.js";
import { tr } from "./state.js";

const lang = document.body.dataset.lang;

function body(id) {
  const node = document.querySelector(`#${id} .body`);
  node.replaceChildren();
  return node;
}

function missing(node) {
  node.append(el("p", { class: "muted na" }, tr("na")));
}

function stat(node, label, value, cls = "") {
  const row = el("div", { class: `stat ${cls}` });
  row.append(el("span", { class: "label" }, label), el("span", { class: "value" }, value));
  node.append(row);
}

function world(model) {
  const node = body("card-world");
  const { sizes, world_size: n, nodes, gpus_per_node: gpn } = model.layout;
  const big = el("p", { class: "big" }, `${sizes.dp} × ${sizes.tp} × ${sizes.pp} = ${n}`);
  node.append(big, el("p", { class: "muted" }, "DP × TP × PP"));
  stat(node, tr("node"), `${nodes} × ${gpn} GPU`);
}

function bubble(model) {
  const node = body("card-bubble");
  const tl = model.timeline;
  node.append(el("p", { class: "big" }, pct(tl.bubble_fraction)));
  node.append(el("p", { class: "muted" }, `${tr("cards.bubble_note")} · ${model.schedule.name}, m = ${model.schedule.microbatches}`));
}

function perf(model) {
  const node = body("card-perf");
  const have = ["step_time_s", "mfu", "tokens_per_s"].some((k) => model[k] !== undefined);
  if (!have) return missing(node);
  stat(node, tr("perf.step_time"), seconds(model.step_time_s));
  const band = bandNode(model.error_band); // how far off the model was on runs like this
  if (band) node.append(band);
  stat(node, tr("perf.mfu"), pct(model.mfu));
  stat(node, tr("perf.tokens"), num(model.tokens_per_s, 4));
}

function linkName(link) {
  if (link === null || link === undefined) return "—";
  if (typeof link === "object") return link.name ?? link.label ?? link.kind ?? JSON.stringify(link);
  const named = tr(`link.${link}`);
  return named === `link.${link}` ? String(link) : named;
}

function comm(model) {
  const node = body("card-comm");
  const c = model.comm;
  if (!c) return missing(node);
  const table = el("table", { class: "comm" });
  for (const axis of ["tp", "pp", "dp"]) {
    const tr_ = table.insertRow();
    tr_.insertCell().textContent = axis.toUpperCase();
    tr_.insertCell().textContent = bytes(c[`${axis}_bytes`]);
    tr_.insertCell().textContent = linkName(c.links?.[axis]);
    if (model.layout.crosses_node[axis]) tr_.classList.add("crosses");
  }
  node.append(table);
}

function advice(model) {
  const node = body("card-advice");
  if (!Array.isArray(model.advice)) return missing(node);
  if (!model.advice.length) return node.append(el("p", { class: "muted" }, tr("advice.none")));
  const ul = el("ul", { class: "advice" });
  for (const a of model.advice) {
    const li = el("li", { "data-rule": a.rule ?? "" });
    li.textContent = (lang === "zh" ? a.message_zh : a.message) ?? a.message ?? "";
    ul.append(li);
  }
  node.append(ul);
}

const PARTS = [
  ["weights_bytes", "mem.weights", KIND.F],
  ["grads_bytes", "mem.grads", KIND.B],
  ["optimizer_bytes", "mem.optimizer", KIND.W],
  ["activations_bytes", "mem.activations", KIND.dp],
];

function memory(model) {
  const node = body("card-memory");
  const mem = model.memory;
  if (!mem?.per_stage?.length) return missing(node);
  const chart = el("div", { class: "chart", id: "memory-chart" });
  const keys = el("div", { class: "legend" });
  for (const [, label, colour] of PARTS) {
    const item = el("span", { class: "item" });
    item.append(el("i", { style: `background:${colour}` }), tr(label));
    keys.append(item);
  }
  const verdict = el("p", { class: mem.fits === false ? "oom" : "fits" });
  verdict.textContent = mem.fits === false ? tr("mem.oom") : mem.fits ? tr("mem.fits") : "";
  node.append(keys, chart, verdict);
  memoryChart(chart, mem, PARTS);
}

export function renderCards(model) {
  world(model);
  bubble(model);
  perf(model);
  comm(model);
  advice(model);
  memory(model);
  renderStageBalance(document.querySelector("#card-balance .body"), model);
}
