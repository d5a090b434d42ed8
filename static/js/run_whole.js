// The run page's "whole run" card: GET /api/runs/{run}/stragglers/run (the run's actions in
// DuckDB, app/api/run_actions.py), its top findings worded as the window's are, and the
// link to the run's actions as Parquet. Read on load, then once a minute while the run is
// live (a whole-run query is heavy: it is not redone per step).
import { fill } from "./i18n.js";
import { sentence } from "./run_stragglers.js";

const TOP = 5;
const EVERY_MS = 60_000;

async function fetchWhole(run) {
  const res = await fetch(`/api/runs/${encodeURIComponent(run)}/stragglers/run`);
  if (res.status === 404) return { empty: true };
  return res.ok ? res.json() : null; // busy (429): the last answer stays drawn
}

function show(card, data) {
  const list = card.querySelector("#whole-run-list");
  const hint = card.querySelector("#whole-run-hint");
  if (data.empty) {
    list.replaceChildren(item(fill("live.whole_run_empty", {})));
    hint.textContent = "";
    return;
  }
  const found = data.stragglers.slice(0, TOP);
  const span = { first: data.first, last: data.last };
  const items = found.length ? found.map((s) => item(sentence(s), s)) : [item(fill("live.whole_run_none", span))];
  list.replaceChildren(...items);
  list.dataset.slowRanks = found.filter((s) => s.cause === "rank").map((s) => s.ranks[0]).join(",");
  hint.textContent = fill("live.whole_run_hint", { ...span, ranks: data.ranks, top: TOP });
  card.dataset.first = String(data.first);
  card.dataset.last = String(data.last);
}

function item(text, s) {
  const li = document.createElement("li");
  li.textContent = text;
  if (s) Object.assign(li.dataset, { cause: s.cause, phase: s.phase, ranks: s.ranks.join(",") });
  return li;
}

// ``live()``: whether the run still grows (the page's verdict), asked before each refresh;
// ``stored()``: whether it has a step yet (else the answer would be a 404, not asked for).
export async function followWholeRun(card, run, live, stored) {
  const data = stored() ? await fetchWhole(run) : { empty: true };
  if (data) show(card, data);
  card.dataset.loaded = "true";
  if (live()) setTimeout(() => followWholeRun(card, run, live, stored), EVERY_MS);
}
