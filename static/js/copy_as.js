// "Copy as": a scenario as Megatron-LM flags, a torchtitan TOML or torch's pipeline action CSV,
// from GET /api/export (app/core/export). Where the framework cannot run the configuration the
// status says why and nothing is copied. One menu per scenario: the page's own (a slot without
// data-query: the URL's scenario at click time), a planner row's or a compare column's.
import { errorText, fill, lang, tr } from "./i18n.js";
import { scenarioQuery } from "./state.js";
import { copyText } from "./clipboard.js";

export const FORMATS = ["megatron", "torchtitan", "torch-csv"];

// The refusal in the page's language: the server's English reason (the fullest), or the
// catalogue's template for its code filled with its params.
function cannotText(body) {
  const c = body.cannot;
  const key = `export.cannot.${c.code}`;
  const reason = lang === "en" || tr(key) === key ? c.reason : fill(key, c.params ?? {});
  return fill("export.cannot", { framework: body.framework, version: body.version, reason });
}

async function run(format, query, status, pre) {
  status.dataset.state = "busy";
  status.textContent = tr("export.working");
  let res, body;
  try {
    res = await fetch(`/api/export?format=${format}&${query}`, { headers: { Accept: "application/json" } });
    body = await res.json();
  } catch {
    return done(status, "error", tr("error.network"));
  }
  if (!res.ok) {
    const d = body?.detail?.[0];
    const field = (d?.loc ?? []).filter((x) => x !== "query").join(".");
    return done(status, "error", d ? `${field}: ${errorText(d)}` : res.statusText);
  }
  if (!body.ok) {
    pre.hidden = true;
    return done(status, "cannot", cannotText(body));
  }
  pre.textContent = body.text;
  pre.hidden = false;
  const what = { what: tr(`export.${format}`), framework: body.framework, version: body.version };
  const copied = await copyText(body.text);
  done(status, copied ? "copied" : "shown", fill(copied ? "export.copied" : "export.shown", what));
}

function done(status, state, text) {
  status.dataset.state = state;
  status.textContent = text;
}

// A <details> menu: a button per format, a status line, and the text copied (to read or
// select by hand). query() gives the scenario's query string when a button is pressed.
export function copyAsMenu(query) {
  const box = document.createElement("details");
  box.className = "copy-as";
  const summary = document.createElement("summary");
  summary.textContent = tr("export.copy_as");
  const menu = document.createElement("div");
  menu.className = "copy-as-menu";
  const status = document.createElement("output");
  status.className = "copy-as-status";
  status.setAttribute("aria-live", "polite");
  const pre = document.createElement("pre");
  pre.className = "copy-as-text";
  pre.hidden = true;
  for (const format of FORMATS) {
    const b = document.createElement("button");
    Object.assign(b, { type: "button", textContent: tr(`export.${format}`) });
    b.dataset.format = format;
    b.addEventListener("click", () => run(format, query(), status, pre));
    menu.append(b);
  }
  const body = document.createElement("div");
  body.className = "copy-as-body";
  body.append(menu, status, pre);
  box.append(summary, body);
  return box;
}

// Fill every server-rendered slot: data-query is a planner row's scenario; none, the page's.
export function fillCopyAsSlots(root = document) {
  for (const slot of root.querySelectorAll(".copy-as-slot")) {
    const fixed = slot.dataset.query;
    slot.replaceChildren(copyAsMenu(() => fixed ?? scenarioQuery()));
  }
}
