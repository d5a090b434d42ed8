// The primer's CP and EP card: which chunks of the sequence each GPU of the selected rank's
// CP ring holds, what the ring passes and leaves exposed, and which experts each GPU of its
// EP group holds, all as app/core/views/cp_ep_primer.py computed them.
import { el, bytes, seconds, rankList } from "./fmt.js";
import { fill, lang, tr } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const SEP = lang === "zh" ? "" : " "; // Chinese sentences follow each other without a space

function table(id, head, rows) {
  const t = $(id);
  t.replaceChildren(el("thead"), el("tbody"));
  const h = el("tr");
  for (const label of head) h.append(el("th", { scope: "col" }, label));
  t.tHead.append(h);
  t.tBodies[0].append(...rows);
}

function row(rank, selected, cells) {
  const r = el("tr", { "data-rank": String(rank), class: selected ? "selected" : "" });
  r.append(el("th", { scope: "row" }, `GPU ${rank}`));
  for (const [label, text] of cells) r.append(el("td", { "data-label": label }, text));
  return r;
}

// The sequence as 2·cp chunks in order, each coloured by the CP position that holds it.
function bar(cp) {
  const owner = new Map();
  cp.chunks.forEach((pair, pos) => pair.forEach((c) => owner.set(c, pos)));
  const cells = [...Array(2 * cp.size).keys()].map((c) => {
    const pos = owner.get(c);
    const hue = Math.round((360 * pos) / cp.size);
    return el("span", {
      class: pos === cp.position ? "cp-chunk mine" : "cp-chunk",
      "data-owner": String(cp.ranks[pos]),
      style: `--hue:${hue}`,
      title: fill("primer.cp.chunk_title", { c, rank: cp.ranks[pos] }),
    }, String(cp.ranks[pos]));
  });
  $("cp-bar").setAttribute("aria-label", tr("primer.cp.bar"));
  $("cp-bar").replaceChildren(...cells);
}

function drawCp(cp) {
  const ranks = rankList(cp.ranks, tr("primer.gpus"));
  if (cp.size === 1) {
    $("cp-facts").textContent = fill("primer.cp.one", { seq: cp.seq_len });
  } else {
    $("cp-facts").textContent = fill("primer.cp.facts", {
      ranks, cp: cp.size, seq: cp.seq_len, chunks: 2 * cp.size, tokens: cp.tokens_per_rank,
    });
    const place = tr(cp.crosses_node ? "primer.cp.crosses" : "primer.cp.inside");
    const key = cp.comm === "p2p" ? "primer.cp.ring" : `primer.cp.${cp.comm}`;
    $("cp-ring").textContent = `${fill(key, {
      steps: cp.ring_steps, kv: bytes(cp.kv_bytes_per_step),
      attn_f: seconds(cp.attention_s.forward), attn_b: seconds(cp.attention_s.backward),
      exp_f: seconds(cp.exposed_s.forward), exp_b: seconds(cp.exposed_s.backward),
    })}${SEP}${place}`;
  }
  bar(cp);
  $("cp-table").hidden = cp.size === 1;
  const cols = [tr("primer.cp.col.chunks"), tr("primer.cp.col.tokens")];
  table("cp-table", ["GPU", ...cols], cp.ranks.map((r, i) => row(r, i === cp.position, [
    [cols[0], fill("primer.cp.pair", { a: cp.chunks[i][0], b: cp.chunks[i][1] })],
    [cols[1], String(cp.tokens_per_rank)],
  ])));
  $("cp-memory").textContent = cp.size === 1 ? "" : fill("primer.cp.memory", {
    now: bytes(cp.activation_bytes.now), cp: cp.size, cp1: bytes(cp.activation_bytes.cp1),
  });
}

function drawEp(ep) {
  $("ep-try-line").hidden = Boolean(ep);
  $("ep-table").hidden = !ep;
  if (!ep) {
    $("ep-facts").textContent = tr("primer.ep.dense");
    return;
  }
  const facts = fill("primer.ep.facts", {
    ranks: rankList(ep.ranks, tr("primer.gpus")), ep: ep.size, experts: ep.experts,
    k: ep.top_k, local: ep.experts_per_rank,
  });
  const shared = ep.shared_experts ? `${SEP}${fill("primer.ep.shared", { n: ep.shared_experts })}` : "";
  $("ep-facts").textContent = facts + shared;
  const col = tr("primer.ep.col.experts");
  table("ep-table", ["GPU", col], ep.ranks.map((r, i) => row(r, i === ep.position, [
    [col, fill("primer.ep.range", { lo: ep.expert_ids[i][0], hi: ep.expert_ids[i][1] })],
  ])));
  $("ep-a2a").textContent = ep.size === 1
    ? tr("primer.ep.one")
    : `${fill("primer.ep.a2a", {
      buffer: bytes(ep.a2a_buffer_bytes), sent: bytes(ep.a2a_sent_bytes),
      sec: seconds(ep.a2a_s), layers: ep.moe_layers,
    })}${SEP}${tr(ep.crosses_node ? "primer.ep.crosses" : "primer.ep.inside")}`;
}

export function drawCpEp(primer) {
  drawCp(primer.cp_ep.cp);
  drawEp(primer.cp_ep.ep);
}
