// Which step the page's figures are: ZB-H2's steady state of back-to-back steps, said so, with
// one step alone beside it (the core's timeline.step_period); nothing for a single step.
import { el, fillTokens } from "./fmt.js";
import { tr } from "./i18n.js";

export function stepPeriodLines(sp) {
  if (sp?.shown !== "steady_state") return [];
  return [
    el("p", { class: "muted", "data-step-period": sp.shown }, tr(sp.key)),
    el("p", { class: "muted", "data-step-period": "figures" }, fillTokens("step_period.figures", sp.args)),
  ];
}
