// The live page's rank-state grid: one square per rank, coloured by the state the server's
// liveness gives it (live, stale, dead, ended, done, missing, unknown). The page derives no
// state: it draws what /api/runs/{run} and the feed's status items say.
import { trOr } from "./i18n.js";

export const RANK_STATES = ["live", "stale", "dead", "ended", "done", "missing", "unknown"];

// ranks: [{rank, state, role}] (GET /api/runs/{run}) or {"rank": state} (a feed status
// item). role: "first" for the rank the server's verdict names as failed first.
export function rankList(ranks) {
  if (Array.isArray(ranks)) return ranks.map((r) => [r.rank, r.state, r.role ?? null]);
  return Object.entries(ranks ?? {}).map(([rank, state]) => [Number(rank), state, null]);
}

// A run's cp and ep after its pp (each in the info only when > 1): cp multiplies the world,
// ep folds inside it (Megatron's expert grid), so it is named apart. Axis names read the same
// in every language.
export function meshTail(info) {
  return `${info.cp ? ` × cp ${info.cp}` : ""}${info.ep ? ` · ep ${info.ep}` : ""}`;
}

// One row per DP replica's ranks (tp x cp x pp; cp is in the info only when > 1) keeps the
// mesh's shape.
export function drawRankStates(el, ranks, info) {
  const list = rankList(ranks).sort((a, b) => a[0] - b[0]);
  const cols = info ? Math.min(Math.max(info.tp * (info.cp ?? 1) * info.pp, 1), 64) : 16;
  el.style.gridTemplateColumns = `repeat(${Math.min(cols, Math.max(list.length, 1))}, minmax(6px, 18px))`;
  el.replaceChildren(...list.map(([rank, state, role]) => {
    const cell = document.createElement("span");
    cell.dataset.rank = String(rank);
    cell.dataset.state = state;
    const first = role === "first" ? ` · ${trOr("live.rank.first", "failed first")}` : "";
    if (role === "first") cell.dataset.role = role;
    cell.title = `rank ${rank}: ${trOr(`live.rank.${state}`, state)}${first}`;
    return cell;
  }));
  const counts = {};
  for (const [, s] of list) counts[s] = (counts[s] ?? 0) + 1;
  el.dataset.dead = String(counts.dead ?? 0);
  el.dataset.stale = String(counts.stale ?? 0);
  return counts;
}

export function rankLegend(el) {
  const item = (state, role, text) => {
    const span = document.createElement("span");
    const swatch = document.createElement("i");
    swatch.dataset.state = state;
    if (role) swatch.dataset.role = role;
    span.append(swatch, text);
    return span;
  };
  el.replaceChildren(...RANK_STATES.filter((s) => s !== "unknown").map((s) => item(s, null, trOr(`live.rank.${s}`, s))),
    item("dead", "first", trOr("live.rank.first", "failed first")));
}
