// The model's error band beside a predicted step time. The core picks the held-out published
// runs of the scenario's kind (or the nearest validated kind) and computes the median and max
// |error|; this only words them and links to the accuracy board.
import { el, pct } from "./fmt.js";
import { fill, lang, tr } from "./i18n.js";

function sources(n) {
  return fill(n === 1 ? "band.sources.one" : "band.sources.many", { k: n });
}

// "± 4.9% (median of 8 held-out runs of this kind, from 1 source; max 7.6%)"
function figures(b, key) {
  return fill(key, { n: b.rows, sources: sources(b.sources.length), max: pct(b.max_abs) });
}

// One key field's value as words: a generation, a schedule, an axis above 1, a switch.
function value(field, v) {
  if (field === "generation") return tr(`band.gen.${v}`);
  if (field === "schedule") return v === "none" ? tr("band.val.no_pipeline") : v;
  if (["tp", "pp", "dp"].includes(field)) return tr(v ? "band.val.above_one" : "band.val.one");
  return tr(v ? "band.val.on" : "band.val.off");
}

function differs(nearest) {
  return nearest.differs
    .map((d) => fill("band.diff", { field: tr(`band.field.${d.field}`), other: value(d.field, d.other),
      this: value(d.field, d.this) }))
    .join(tr("band.diff_sep"));
}

function validated(node, band) {
  let text = figures(band, "band.held_out");
  if (!band.same_hardware) text += `${tr("band.sep")}${fill("band.on", { hardware: band.hardware.join(", ") })}`;
  node.append(el("b", { class: "pm" }, `± ${pct(band.median_abs)}`), " ", el("span", {}, `(${text})`));
}

function notValidated(node, band) {
  node.append(el("span", { class: "nv" }, tr("band.not_validated")));
  const near = band.nearest;
  if (!near) return;
  node.append(tr("band.sep"), el("span", {}, fill("band.nearest", { diff: differs(near) })), " ",
    el("b", { class: "pm" }, `± ${pct(near.median_abs)}`), " ",
    el("span", {}, `(${figures(near, "band.nearest_figures")})`));
}

// A <p class="band"> for a view's error_band, or null when the view carries none.
export function bandNode(band) {
  if (!band) return null;
  const level = band.validated ? "kind" : band.reason === "kind" ? "nearest" : "none";
  const node = el("p", { class: band.validated ? "band" : "band none", title: tr("band.title"),
    "data-level": level });
  if (band.validated) validated(node, band);
  else if (band.reason === "kind") notValidated(node, band);
  else node.append(el("span", {}, tr(`band.none.${band.reason}`)));
  const href = lang === "zh" ? "/fidelity?lang=zh" : "/fidelity";
  node.append(" · ", el("a", { href, "data-link": "fidelity" }, tr("band.link")));
  return node;
}
