// URL <-> state. The URL is the share link, so it holds everything: every scenario
// parameter that differs from its default, plus the view's own state (rank, t, lang, ...).
// The page starts from the JSON the server embedded, so the first picture needs no fetch.

import { errorText, tr } from "./i18n.js";

export { tr };

const data = JSON.parse(document.getElementById("page-data").textContent);

export const page = data.page;
export const defaults = data.defaults;
export const viewKeys = new Set(data.view_keys);

export function initial() {
  return { model: data.model, extra: data.extra, errors: data.errors, state: data.state };
}

function isDefault(key, value) {
  const d = defaults[key];
  if (value === "" || value === null || value === undefined) return true;
  if (d === null || d === undefined) return false;
  if (typeof d === "number") return Number(value) === d;
  return String(value).toLowerCase() === String(d).toLowerCase();
}

// The current URL's parameters as a plain object.
export function params() {
  return Object.fromEntries(new URLSearchParams(location.search));
}

// A model's shape fields: given without model=, the server reads them as a new custom model
// (ARCH_FIELDS, app/core/inputs/scenario.py; tests/browser/test_shape_field_keeps_model.py
// checks this list against it).
export const SHAPE_FIELDS = ["layers", "hidden", "heads", "kv_heads", "seq_len", "vocab", "ffn_hidden",
  "gated_mlp", "tied_embeddings", "learned_positions"];
const shaped = (p) => SHAPE_FIELDS.some((f) => f in p);

// Set (or clear, when default/empty) one or more parameters; keeps everything else.
export function setParams(changes) {
  const before = params();
  const next = { ...before };
  for (const [k, v] of Object.entries(changes)) {
    if (isDefault(k, v)) delete next[k];
    else next[k] = String(v);
  }
  // A shape field over the default preset (typed, or the preset chosen back) edits that
  // preset, as the model box shows it: name it, as Scenario.query() does, or the server would
  // read a custom model and ask for its layers. A URL shaped without model= stays custom.
  const customByOmission = shaped(before) && !("model" in before);
  if (defaults?.model && !customByOmission && shaped(next) && !("model" in next)) next.model = defaults.model;
  const qs = new URLSearchParams(next).toString();
  history.replaceState(null, "", location.pathname + (qs ? "?" + qs : ""));
  document.dispatchEvent(new CustomEvent("meshscope:url"));
  return next;
}

export function scenarioQuery(p = params()) {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) if (!viewKeys.has(k)) out.set(k, v);
  return out.toString();
}

// Errors keyed by field from a 422 body: detail[].loc = ["query", field, ...].
function errorsOf(body) {
  const out = {};
  for (const d of body?.detail ?? []) {
    const loc = (d.loc ?? []).filter((x) => x !== "query");
    const field = loc.length ? String(loc[0]) : "query";
    out[field] ??= errorText(d);
  }
  return out;
}

// GET a JSON API with the current scenario; {ok, data} or {ok: false, errors}.
export async function fetchScenarioJSON(path) {
  let res;
  try {
    res = await fetch(`${path}?${scenarioQuery()}`, { headers: { Accept: "application/json" } });
  } catch {
    return { ok: false, errors: { query: tr("error.network") } };
  }
  const body = await res.json().catch(() => null);
  if (res.ok) return { ok: true, data: body };
  return { ok: false, errors: res.status === 422 ? errorsOf(body) : { query: res.statusText } };
}

// The view model and the view's derived data, fetched together after a control changes.
export async function refetch(extraPath) {
  const [model, extra] = await Promise.all([
    fetchScenarioJSON("/api/scenario"),
    fetchScenarioJSON(extraPath),
  ]);
  if (!model.ok) return { errors: model.errors };
  if (!extra.ok) return { errors: extra.errors };
  return { model: model.data, extra: extra.data, errors: {} };
}
