// A chart's legend as page text under it, not Plotly's: Plotly clips an entry that runs past
// the plot ("activation‹", "2×4×⁄" at 390 px on /compare) and lays a horizontal legend over
// rotated tick labels (the live page's "Where the step went", badly in zh); page text wraps.
import { el } from "./fmt.js";

export function htmlLegend(div, items) {
  let box = div.nextElementSibling;
  if (!box?.classList.contains("chart-legend")) {
    box = el("div", { class: "legend chart-legend" });
    div.after(box);
  }
  box.replaceChildren(...items.map(([name, color]) => {
    const item = el("span", { class: "item" });
    item.append(el("i", { style: `background:${color}` }), name);
    return item;
  }));
}
