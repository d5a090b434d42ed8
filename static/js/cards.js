// Summary cards of the overview. They draw the core's numbers and never compute one:
// a key the core does not send yet shows a plain "not available" line instead.
import { bandNode } from "./band.js";
import { bytes, el, fillTokens, num, pct, seconds, token } from "./fmt.js";
import { memoryChart } from "./memchart.js";
import { categorical, KIND, MEMORY_PARTS as PARTS } from "./palette.js";
import { renderStageBalance } from "./stage_balance.js";
import { stepPeriodLines } from "./step_period.js";
import { fill } from "./i18n.js";
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

// A chain of sides as "side = side = …", in a line tests and readers can find by name.
function chainLine(chain, name, cls = "formula-line") {
  const sides = chain.map((side) => side.map(token).join(""));
  return el("p", { class: cls, "data-formula": name }, sides.join(" = "));
}

// "simulated X vs closed form Y", then each cause with its size, or that they agree.
function explain(node, card, vsKey, vsArgs) {
  const causes = card.causes ?? [];
  const box = el("div", { class: "formula-why", "data-formula-why": card.id });
  box.append(el("p", { class: "muted" }, fillTokens(vsKey, vsArgs)));
  if (card.decomposed === false) box.append(el("p", { class: "muted" }, tr("formulas.undecomposed")));
  else if (!causes.length) box.append(el("p", { class: "muted" }, tr("formulas.agrees")));
  else {
    box.append(el("p", { class: "muted" }, tr("formulas.why")));
    const ul = el("ul", { class: "causes" });
    for (const c of causes) {
      const sign = c.delta.u !== "pts" && c.delta.v >= 0 ? "+" : ""; // "pts" carries its own
      ul.append(el("li", { "data-cause": c.key }, `${fillTokens(c.key, c.args)}: ${sign}${token(c.delta)}`));
    }
    box.append(ul);
  }
  node.append(box);
}

function world(model) {
  const node = body("card-world");
  const { nodes, gpus_per_node: gpn } = model.layout;
  const f = model.formulas?.world;
  if (f) node.append(chainLine(f.chain.slice(1), "world", "big"));
  node.append(el("p", { class: "muted" }, model.layout.sizes.cp ? "DP × TP × PP × CP" : "DP × TP × PP"));
  stat(node, tr("node"), `${nodes} × ${gpn} GPU`);
}

// The figure the core says to show: ZB-H2's steady state of back-to-back steps, said so with
// one step alone beside it; every other schedule's single step (views/step_period.py).
function bubble(model) {
  const node = body("card-bubble");
  const tl = model.timeline;
  const sp = tl.step_period;
  node.append(el("p", { class: "big" }, pct(sp ? sp.bubble_fraction : tl.bubble_fraction)));
  node.append(el("p", { class: "muted" }, `${tr("cards.bubble_note")} · ${model.schedule.name}, m = ${model.schedule.microbatches}`));
  node.append(...stepPeriodLines(sp));
  const f = model.formulas?.bubble;
  if (!f) return;
  node.append(chainLine(f.chain, "bubble"));
  if (f.reference) node.append(el("p", { class: "muted" }, fillTokens("formulas.reference", [model.schedule.name])));
  explain(node, f, "formulas.vs", [f.simulated, f.closed]);
}

function perf(model) {
  const node = body("card-perf");
  const have = ["step_time_s", "mfu", "tokens_per_s"].some((k) => model[k] !== undefined);
  if (!have) return missing(node);
  stat(node, tr("perf.step_time"), seconds(model.step_time_s));
  const band = bandNode(model.error_band); // how far off the model was on runs like this
  if (band) node.append(band);
  stat(node, tr("perf.mfu"), pct(model.mfu));
  const fp8 = model.compute?.fp8;
  // FP8 runs report MFU against the bf16 peak (the core's prediction.py), so say so.
  if (fp8 && fp8 !== "none") node.append(el("p", { class: "muted", "data-mfu-basis": "bf16" }, fill("perf.mfu_fp8", { recipe: fp8 })));
  stat(node, tr("perf.tokens"), num(model.tokens_per_s, 4));
  const f = model.formulas?.step;
  if (!f) return;
  node.append(chainLine(f.chain, "step"), chainLine(f.tokens, "tokens"), chainLine(f.mfu, "mfu"));
  node.append(el("p", { class: "muted where" }, tr("formulas.where.step")));
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
  const f = model.formulas?.comm;
  if (!f) return;
  for (const axis of ["tp", "pp", "dp"]) node.append(chainLine(f.axes[axis], `comm-${axis}`));
  node.append(el("p", { class: "muted where" }, tr("formulas.where.comm")));
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


function memory(model) {
  const node = body("card-memory");
  const mem = model.memory;
  if (!mem?.per_stage?.length) return missing(node);
  const chart = el("div", { class: "chart", id: "memory-chart" });
  const keys = el("div", { class: "legend" });
  // The legend and the chart take the parts some stage has (zero ones add nothing).
  const shown = PARTS.filter(([key]) => mem.per_stage.some((s) => (s[key] ?? 0) > 0));
  for (const [, label, colour] of shown) {
    const item = el("span", { class: "item" });
    item.append(el("i", { style: `background:${colour}` }), tr(label));
    keys.append(item);
  }
  const verdict = el("p", { class: mem.fits === false ? "oom" : "fits" });
  verdict.textContent = mem.fits === false ? tr("mem.oom") : mem.fits ? tr("mem.fits") : "";
  node.append(keys, chart, verdict);
  if (mem.reserved_bytes !== undefined) {
    const args = [mem.allocated_bytes, mem.reserved_bytes, mem.peak_bytes, mem.capacity_bytes];
    node.append(el("p", { class: "muted", "data-memory": "figures" }, fillTokens("mem.figures", args.map((v) => ({ v, u: "B" })))));
  }
  memoryChart(chart, mem, shown);
  const f = model.formulas?.memory;
  if (!f) return;
  node.append(chainLine(f.chain, "memory"), el("p", { class: "muted where" }, tr("formulas.where.memory")));
  explain(node, f, "formulas.memory_vs", [{ v: f.stage, u: "n" }, f.simulated, f.closed]);
}

// The formulas section: each formula again with this scenario's numbers under it.
const SECTION = [
  ["f-world", "world", (f) => [f.world.chain]],
  ["f-batch", "batch", (f) => [f.batch.chain, f.batch.tokens]],
  ["f-bubble", "bubble", (f) => [f.bubble.chain]],
  ["f-memory", "memory", (f) => [f.memory.chain]],
  ["f-allreduce", "comm-dp", (f) => [f.comm.axes.dp]],
  ["f-split", "comm-tp", (f) => [f.comm.axes.tp]],
];

function section(model) {
  const f = model.formulas;
  for (const [id, name, chains] of SECTION) {
    const box = document.getElementById(id);
    if (!box || !f) continue;
    box.querySelector(".with-numbers")?.remove();
    const wrap = el("div", { class: "with-numbers" });
    wrap.append(el("p", { class: "muted" }, tr("formulas.with_numbers")));
    for (const chain of chains(f)) wrap.append(chainLine(chain, name));
    const where = tr(`formulas.where.${name.split("-")[0]}`);
    wrap.append(el("p", { class: "muted where" }, where));
    box.append(wrap);
  }
}

export function renderCards(model) {
  world(model);
  bubble(model);
  perf(model);
  comm(model);
  advice(model);
  memory(model);
  renderStageBalance(document.querySelector("#card-balance .body"), model);
  section(model);
}
