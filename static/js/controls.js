// The scenario form, the header buttons and error display, shared by every view.
import { params, scenarioQuery, setParams, tr } from "./state.js";
import { copyText } from "./clipboard.js";

// Text inputs re-fetch once typing pauses; selects and checkboxes at once.
const TYPING_MS = 400;

function valueOf(el) {
  // "false", not "": a field whose default is on (sequence_parallel, flash_attention) must
  // be able to say off; setParams drops whichever value is the default.
  if (el.type === "checkbox") return el.checked ? "true" : "false";
  return el.value.trim();
}

// Calls onChange() after the URL has been updated for a changed scenario control.
export function bindForm(onChange) {
  const form = document.getElementById("controls");
  const timers = new Map(); // one per field: typing in one never drops another's change
  const commit = (el) => {
    clearTimeout(timers.get(el.name));
    const before = location.search;
    setParams({ [el.name]: valueOf(el) });
    // A blur after typing repeats the change: same URL, so no refetch (and no redraw that
    // would stop a playing animation).
    if (location.search !== before) onChange();
  };
  form.addEventListener("change", (ev) => ev.target.name && commit(ev.target));
  form.addEventListener("input", (ev) => {
    const el = ev.target;
    if (!el.name || el.tagName !== "INPUT" || el.type === "checkbox") return;
    clearTimeout(timers.get(el.name));
    timers.set(el.name, setTimeout(() => commit(el), TYPING_MS));
  });
}

// Each message goes next to the control it names; names without a control go to the banner.
export function showErrors(errors) {
  const banner = document.getElementById("error-banner");
  for (const out of document.querySelectorAll("output.err")) out.textContent = "";
  for (const el of document.querySelectorAll(".ctl.invalid")) el.classList.remove("invalid");
  banner.querySelector("ul")?.remove();
  const orphans = [];
  for (const [field, msg] of Object.entries(errors ?? {})) {
    const slot = document.querySelector(`output.err[data-err-for="${CSS.escape(field)}"]`);
    if (slot) {
      slot.textContent = msg;
      slot.closest(".ctl")?.classList.add("invalid");
      slot.closest("details")?.setAttribute("open", "");
    } else {
      orphans.push(`${tr("error.unknown")}: ${field} — ${msg}`);
    }
  }
  if (orphans.length) {
    const ul = document.createElement("ul");
    for (const text of orphans) ul.appendChild(document.createElement("li")).textContent = text;
    banner.appendChild(ul);
  }
  banner.hidden = Object.keys(errors ?? {}).length === 0;
  for (const p of document.querySelectorAll(".fix-first")) p.hidden = banner.hidden;
}

// Navigation keeps the whole state: both views read the same parameters.
export function updateLinks() {
  const qs = new URLSearchParams(params()).toString();
  const sq = scenarioQuery();
  // The comparison takes the current scenario as the factory preset's base.
  const cq = [sq && `preset=factory&${sq}`, params().lang === "zh" && "lang=zh"].filter(Boolean);
  const hrefs = { overview: `/?${qs}`, flow: `/flow?${qs}`, api: `/api/scenario?${sq}`,
    compare: `/compare?${cq.join("&")}`, trend: `/trend?${qs}`, primer: `/primer?${qs}` };
  for (const a of document.querySelectorAll("[data-nav]")) if (hrefs[a.dataset.nav]) a.href = hrefs[a.dataset.nav];
  const trace = document.getElementById("export-trace");
  if (trace) trace.href = `/api/trace?${sq}`;
}

export function bindHeader() {
  const status = document.getElementById("copy-status");
  document.getElementById("copy-link").addEventListener("click", async () => {
    const ok = await copyText(location.href);
    status.textContent = ok ? tr("copy.done") : location.href;
    status.dataset.url = location.href;
  });
  document.getElementById("lang-toggle").addEventListener("click", (ev) => {
    // The server renders every label in the new language: one source for all text.
    setParams({ lang: ev.currentTarget.dataset.to });
    location.reload();
  });
  document.addEventListener("meshscope:url", updateLinks);
  updateLinks();
}
