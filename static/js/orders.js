// The order comparison table: the core says how many nodes one group of each axis spans.
import { el } from "./fmt.js";
import { trOr } from "./i18n.js";
import { tr } from "./state.js";

export function renderOrders(box, orders, current, onUse) {
  box.replaceChildren();
  box.style.overflowX = "auto"; // with cp and ep columns the table outgrows a phone
  const table = el("table", { class: "orders" });
  const head = table.createTHead().insertRow();
  // cp and ep columns only when the scenario uses them (the core sends them only then).
  const axes = ["tp", "pp", "dp", "cp", "ep"].filter((a) => a in (orders[0]?.nodes_spanned ?? {}));
  const names = axes.map((a) => a.toUpperCase());
  for (const h of [tr("orders.order"), tr("orders.frameworks"), ...names, ""]) {
    head.appendChild(el("th", {}, h));
  }
  const tbody = table.createTBody();
  for (const o of orders) {
    const row = tbody.insertRow();
    row.dataset.order = o.order;
    if (o.order === current) row.classList.add("current");
    row.insertCell().appendChild(el("code", {}, o.order));
    // "article" is a word (the catalogue's opt.order.article, as the order select has it); frameworks are names.
    row.insertCell().textContent = o.presets.map((n) => trOr(`opt.order.${n}`, n)).join(", ");
    for (const axis of axes) {
      const cell = row.insertCell();
      cell.textContent = String(o.nodes_spanned[axis]);
      cell.className = o.crosses_node[axis] ? "cross" : "within";
      cell.title = `${tr("orders.spans")}: ${o.nodes_spanned[axis]}`;
    }
    const action = row.insertCell();
    if (o.order === current) action.textContent = tr("orders.current");
    else {
      const b = el("button", { type: "button", "data-use-order": o.order }, tr("orders.use"));
      b.addEventListener("click", () => onUse(o.order));
      action.appendChild(b);
    }
  }
  box.appendChild(table);
  box.appendChild(el("p", { class: "hint" }, `${tr("orders.spans")} (${names.join(", ")})`));
}
