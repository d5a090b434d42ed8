// The model's error band beside a predicted step time. The core picks the published runs and
// computes the median and max |error|; this only words them and links to the accuracy board.
import { el, pct } from "./fmt.js";
import { fill, lang, tr } from "./i18n.js";

function words(band) {
  const vars = { n: band.rows, max: pct(band.max_abs), gen: tr(`band.gen.${band.kind.generation}`) };
  const text = fill(`band.${band.level}`, vars);
  return band.same_hardware ? text : `${text}; ${fill("band.on", { hardware: band.hardware.join(", ") })}`;
}

// A <p class="band"> for a view's error_band, or null when the view carries none.
export function bandNode(band) {
  if (!band) return null;
  const node = el("p", { class: band.validated ? "band" : "band none", title: tr("band.title"),
    "data-level": band.validated ? band.level : "none" });
  if (band.validated) {
    node.append(el("b", { class: "pm" }, `± ${pct(band.median_abs)}`), " ", el("span", {}, `(${words(band)})`));
  } else {
    node.append(el("span", {}, tr(`band.none.${band.reason}`)));
  }
  const href = lang === "zh" ? "/fidelity?lang=zh" : "/fidelity";
  node.append(" · ", el("a", { href, "data-link": "fidelity" }, tr("band.link")));
  return node;
}
