// The guided path's bar widget: one horizontal bar per scenario the step names, split into
// the parts the core computed (app/core/evaluate/learn.py). Memory bars share one scale with
// the GPU's capacity as a dashed line; time bars are each step's shares, so runs of different
// lengths compare. Plain DOM, so labels wrap on a phone instead of scrolling sideways.
import { bytes, el, num, pct } from "./fmt.js";
import { fill, tr } from "./i18n.js";
import { KIND, categorical } from "./palette.js";

const CUT_AT = 2.5;
const PARTS = {
  memory: [
    ["weights", "mem.weights", KIND.F], ["grads", "mem.grads", KIND.B],
    ["optimizer", "mem.optimizer", KIND.W], ["activations", "mem.activations", KIND.dp],
    ["other", "learn.mem.other", categorical(9)],
  ],
  time: [
    ["compute", "learn.time.compute", KIND.F], ["tp", "learn.time.tp", KIND.tp],
    ["bubble", "learn.time.bubble", "#c9c9c9"], ["dp", "learn.time.dp", KIND.dp],
    ["optimizer", "learn.time.optimizer", KIND.optim], ["other", "learn.time.other", categorical(9)],
  ],
};

function head(v, kind, note) {
  const rate = fill("learn.rate", { tps: num(v.tokens_per_s), mfu: pct(v.mfu, 0) });
  if (kind === "time") return `${v.label} · ${fill("learn.gpus", { n: v.world_size })} · ${rate}`;
  const parts = [v.label, bytes(v.peak_bytes), tr(v.fits ? "learn.mem.fits" : "learn.mem.over")];
  if (note === "rate") parts.push(rate);
  if (note === "tp_share") parts.push(fill("learn.tp_share", { share: pct(v.tp_share) }));
  return parts.join(" · ");
}

function bar(v, kind, scale) {
  const total = kind === "time" ? v.step_time_s : v.peak_bytes;
  const track = el("div", { class: "learn-track" });
  let room = 1; // what is left of the track: a bar past the scale is cut, and marked
  for (const [key, label, colour] of PARTS[kind]) {
    const value = v[kind][key] ?? 0;
    if (value <= 0 || room <= 0) continue;
    const share = Math.min(room, kind === "time" ? value / total : value / scale);
    room -= share;
    const shown = kind === "time" ? pct(value / total) : bytes(value);
    const seg = el("span", { class: "learn-seg", "data-part": key, title: `${tr(label)}: ${shown}` });
    seg.style.width = `${(share * 100).toFixed(3)}%`;
    seg.style.background = colour;
    track.append(seg);
  }
  if (kind === "memory" && v.peak_bytes > scale) track.append(el("b", { class: "learn-cut", "aria-hidden": "true" }, "≫"));
  return track;
}

export function drawBars(box, keys, w) {
  const kind = w.kind;
  const cap = w.capacity_bytes;
  // One scale for every memory bar, the card included, so "does not fit" is seen, not read;
  // up to CUT_AT cards, so a 1.3 TiB bar does not squash the rest (its label keeps the size).
  const scale = Math.min(CUT_AT * cap, Math.max(cap, ...w.variants.map((v) => v.peak_bytes)));
  const rows = w.variants.map((v) => {
    const row = el("div", { class: "learn-bar", "data-query": v.query, "data-fits": String(v.fits) });
    row.append(el("div", { class: "learn-bar-head" }, head(v, kind, w.note)));
    const track = bar(v, kind, scale);
    if (kind === "memory") {
      const line = el("i", { class: "learn-cap", title: `${tr("mem.capacity")} ${bytes(cap)}` });
      line.style.left = `${((cap / scale) * 100).toFixed(3)}%`;
      track.append(line);
    }
    row.append(track);
    return row;
  });
  box.replaceChildren(...rows);
  const used = PARTS[kind].filter(([key]) => w.variants.some((v) => (v[kind][key] ?? 0) > 0));
  keys.replaceChildren(...used.map(([, label, colour]) => {
    const swatch = el("i");
    swatch.style.background = colour;
    const item = el("span");
    item.append(swatch, tr(label));
    return item;
  }));
  return kind === "time" ? tr("learn.time.caption") : fill("learn.mem.caption", { cap: bytes(cap) });
}
