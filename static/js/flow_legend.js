// The flow page's legend and caption: block kinds, the chunk shades as the timeline drew
// them, and each frame's sentence worded from the clauses the core chose (app/core/flow_captions.py).
import { el, num } from "./fmt.js";
import { fill, tr } from "./i18n.js";
import { KIND } from "./palette.js";

export function renderKinds(box) {
  for (const key of ["F", "B", "W", "dp", "optim"]) {
    const item = el("span", { class: "item" });
    item.append(el("i", { style: `background:${KIND[key]}` }), tr(`kind.${key}`));
    box.append(item);
  }
  const idle = el("span", { class: "item" });
  idle.append(el("i", { class: "pattern" }), tr("kind.idle"));
  const hidden = el("span", { class: "item" });
  hidden.append(el("i", { class: "pattern-dp" }), tr("kind.dp_hidden"));
  const tp = el("span", { class: "item" });
  tp.append(el("i", { style: `background:${KIND.tp}` }), tr("flow.tp_pulse"));
  const send = el("span", { class: "item" }, `→ ${tr("kind.send")}`);
  const pulse = el("span", { class: "item" }, `◯ ${tr("legend.tp_ring")}`);
  box.append(idle, hidden, tp, send, pulse);
}

// One swatch per chunk, in the colour the timeline gave that chunk's forwards (read from the
// drawn Plotly trace, so the legend cannot drift from the picture).
function drawnShades(plotDiv) {
  const trace = (plotDiv.data ?? []).find((t) => t.meta === "F");
  const out = new Map();
  if (!trace) return out;
  trace.customdata.forEach((d, i) => out.has(d[1]) || out.set(d[1], trace.marker.color[i]));
  return out;
}

// chunks: the core's {per_rank, v} for this scenario (app/core/flow.py flow_view).
export function renderChunks(chunks, plotDiv) {
  const many = (chunks?.per_rank ?? 1) > 1;
  document.getElementById("chunks-one").hidden = many;
  document.getElementById("chunks-many").hidden = !many;
  document.getElementById("chunks-v").hidden = !(many && chunks.v);
  const box = document.getElementById("chunk-shades");
  const shades = many ? [...drawnShades(plotDiv)].sort((a, b) => a[0] - b[0]) : [];
  box.replaceChildren(...shades.map(([c, colour]) => {
    const item = el("span", { class: "item", "data-chunk": c });
    item.append(el("i", { style: `background:${colour}` }), `${tr("chunk")} ${c}`);
    return item;
  }));
}

// The sentence for frame k at time t: "t=3: " + the clauses, each filled from its template.
export function captionText(captions, k, t) {
  const at = fill("flowcap.at", [num(t, 4)]);
  if (!captions) return at + tr("flow.captions_left_out");
  const parts = captions.frames[k].map((i) => {
    const [key, ...args] = captions.clauses[i];
    return fill(`flowcap.${key}`, args);
  });
  return at + parts.join(tr("flowcap.sep")) + tr("flowcap.end");
}
