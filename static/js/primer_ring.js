// The ring all-reduce card: one row per GPU in ring order, one cell per chunk showing how
// many GPUs' data it sums (from the core's simulated holdings), and this step's sends.
import { el, bytes, rankList } from "./fmt.js";
import { fill, tr } from "./i18n.js";

const $ = (id) => document.getElementById(id);

export function ringFacts(primer) {
  const r = primer.ring;
  const what = tr(`primer.what.${r.source}`);
  $("ring-facts").textContent = fill("primer.ring.facts", {
    ranks: rankList(r.ranks), what, size: bytes(r.size_bytes), n: r.n,
    chunk: bytes(r.chunk_bytes), rs: r.reduce_scatter_steps, total: r.steps_total,
  });
  $("ring-bytes").textContent = fill("primer.ring.bytes", {
    chunk: bytes(r.chunk_bytes), per_rank: bytes(r.per_rank_bytes), total: r.steps_total,
    n: r.n, size: bytes(r.size_bytes),
  });
  if (r.n === 1) $("ring-caption").textContent = tr("primer.ring.single");
  else if (!r.drawn) $("ring-caption").textContent = fill("primer.ring.undrawn", { max: 16 });
}

function caption(r, s) {
  const vars = { k: s.index, total: r.steps_total, n: r.n };
  if (s.index === 0) return fill("primer.cap.start", vars);
  if (s.index === r.steps_total) return fill("primer.cap.done", vars);
  return fill(`primer.cap.${s.phase}`, vars);
}

function row(r, s, pos) {
  const rank = r.ranks[pos];
  const line = el("div", { class: "ring-row", "data-rank": String(rank) });
  line.append(el("span", { class: "ring-gpu" }, `GPU ${rank}`));
  const cells = el("span", { class: "ring-cells" });
  const got = s.sends.find((m) => m.to === rank);
  s.holds[pos].forEach((count, c) => {
    const cls = ["ring-cell", count === r.n ? "full" : "", got && got.chunk === c ? "got" : ""];
    const cell = el("span", { class: cls.join(" ").trim(), "data-count": String(count) }, String(count));
    cell.style.setProperty("--fill", String(count / r.n)); // shade only, no model arithmetic
    cell.title = fill("primer.ring.cell", { c, count, n: r.n });
    cells.append(cell);
  });
  line.append(cells);
  const sent = s.sends.find((m) => m.from === rank);
  line.append(el("span", { class: "ring-send" }, sent ? fill("primer.ring.send", { from: sent.from, to: sent.to, c: sent.chunk }) : ""));
  return line;
}

export function drawRing(primer, k) {
  const r = primer.ring;
  const s = r.steps[k];
  if (!s) return;
  $("ring-caption").textContent = caption(r, s);
  const grid = $("ring-grid");
  grid.style.setProperty("--chunks", String(r.n));
  grid.replaceChildren(...r.ranks.map((_, pos) => row(r, s, pos)));
  grid.dataset.step = String(k);
  $("ring-sent").textContent = fill("primer.ring.sent_so_far", { bytes: bytes(s.sent_so_far_bytes) });
}
