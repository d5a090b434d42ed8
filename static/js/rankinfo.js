// Words about one rank: the tooltip and the selection panel. Lookups in the layout only.
import { el, rankList } from "./fmt.js";
import { GROUP } from "./palette.js";
import { tr } from "./state.js";

const FOLDED = ["etp", "edp"]; // the expert grid's groups, sent only when etp != tp
const EXTRA = ["cp", "ep", ...FOLDED];

function nodesOf(layout, ranks) {
  return new Set(ranks.map((r) => layout.ranks[r].node));
}

// (dp, pp, tp), and cp after them when the layout has a CP axis (cp > 1).
function coordText(info) {
  const cp = info.cp === undefined ? "" : `, ${info.cp}`;
  return `(${info.dp}, ${info.pp}, ${info.tp}${cp})`;
}

const coordLabel = (info) => tr(info.cp === undefined ? "coord" : "coord.cp");

export function tipHtml(grid, h) {
  if (!h) return "";
  const lay = grid.layout;
  if (grid.isAggregated() || h.rank === null) {
    const first = h.node * lay.gpus_per_node;
    const last = Math.min(lay.world_size, first + lay.gpus_per_node) - 1;
    return `<b>${tr("node")} ${h.node}</b><br>${tr("rank")} ${first}–${last}`;
  }
  const info = lay.ranks[h.rank];
  const g = grid.groupsOf(h.rank);
  const n = tr("ranks_count");
  return [
    `<b>${tr("rank")} ${h.rank}</b> · ${tr("node")} ${info.node}`,
    `${coordLabel(info)}: ${coordText(info)}`,
    `${tr("group.tp")}: ${rankList(g.tp, n, 8)}`,
    `${tr("group.pp")}: ${rankList(g.pp, n, 8).replaceAll(", ", " → ")}`,
    `${tr("group.dp")}: ${rankList(g.dp, n, 8)}`,
    ...EXTRA.filter((a) => g[a]).map((a) => `${tr(`group.${a}`)}: ${rankList(g[a], n, 8)}`),
  ].join("<br>");
}

function groupRow(layout, axis, label, ranks, sep = ", ") {
  const crosses = nodesOf(layout, ranks).size > 1;
  const row = el("div", { class: "group-row", "data-axis": axis });
  const dashed = FOLDED.includes(axis) ? ";border-style:dashed" : ""; // as grid.js draws them
  const swatch = el("span", { class: "swatch", style: `border-color:${GROUP[axis]}${dashed}` });
  row.append(swatch, el("b", {}, `${label}: `));
  row.append(el("span", { class: "members" }, rankList(ranks, tr("ranks_count"), 16).replaceAll(", ", sep)));
  const badge = el("span", { class: crosses ? "badge cross" : "badge within" });
  badge.textContent = crosses ? tr("crosses") : tr("within");
  row.append(" ", badge);
  return row;
}

function neighbours(layout, pipeline, rank) {
  const i = pipeline.indexOf(rank);
  const up = i > 0 ? pipeline[i - 1] : null;
  const down = i + 1 < pipeline.length ? pipeline[i + 1] : null;
  const side = (r, none) => {
    if (r === null) return none;
    const hop = layout.ranks[r].node !== layout.ranks[rank].node;
    return `${r} (${tr("node")} ${layout.ranks[r].node}${hop ? ", " + tr("crosses") : ""})`;
  };
  return `${tr("upstream")}: ${side(up, tr("none.first"))} · ${tr("downstream")}: ${side(down, tr("none.last"))}`;
}

export function renderSelection(box, grid, rank) {
  box.replaceChildren();
  if (rank === null || rank === undefined) {
    box.append(el("p", { class: "muted" }, tr("grid.none_selected")));
    return;
  }
  const lay = grid.layout;
  const info = lay.ranks[rank];
  const g = grid.groupsOf(rank);
  const head = el("p", {}, "");
  head.append(el("b", {}, `${tr("rank")} ${rank}`), ` · ${tr("node")} ${info.node} · ${coordLabel(info)} ${coordText(info)}`);
  const clear = el("button", { type: "button", id: "clear-selection" }, tr("grid.clear"));
  head.append(" ", clear);
  box.append(head);
  box.append(groupRow(lay, "tp", tr("group.tp"), g.tp));
  box.append(groupRow(lay, "pp", tr("group.pp"), g.pp, " → "));
  box.append(el("div", { class: "neighbours" }, neighbours(lay, g.pp, rank)));
  box.append(groupRow(lay, "dp", tr("group.dp"), g.dp));
  // The CP ring (KV blocks go round it) and the EP group, each with its node badge.
  if (g.cp) box.append(groupRow(lay, "cp", tr("group.cp"), g.cp, " → "));
  if (g.ep) box.append(groupRow(lay, "ep", tr("group.ep"), g.ep));
  // MoE parallel folding (etp != tp): the expert layers' own TP and DP groups.
  for (const a of FOLDED) if (g[a]) box.append(groupRow(lay, a, tr(`group.${a}`), g[a]));
}
