// The page's strings: the server embeds its language's table from the same catalogue its
// templates read (app/i18n/locales/<lang>.json, flattened) in the page-data JSON.
// tr(key): an unknown key shows itself, so a gap is visible rather than blank.
const data = JSON.parse(document.getElementById("page-data")?.textContent || "{}");
const strings = data.strings ?? {};

export const lang = document.body.dataset.lang || "en";

export function tr(key) {
  return strings[key] ?? key;
}

// The translation of key, or fallback when this table has none (values that come as data).
export function trOr(key, fallback) {
  return strings[key] ?? fallback;
}

// tr with {name} placeholders filled from vars.
export function fill(key, vars) {
  return tr(key).replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));
}

// The server renders every label, so switching reloads the page with lang in its URL.
export function switchLang(to) {
  const url = new URL(location.href);
  if (to === "en") url.searchParams.delete("lang");
  else url.searchParams.set("lang", to);
  location.assign(url);
}

// One 422 detail in the page's language, as app/i18n/errors.py:message words it: English is
// pydantic's msg; other languages fill the err.<type> template from the detail's ctx.
export function errorText(d) {
  if (d.type === "extra_forbidden") return tr("err.extra_forbidden");
  const template = strings[`err.${d.type}`];
  if (lang === "en" || !template) return d.msg;
  const joiner = strings["err.or"] ?? " or ";
  const ctx = Object.fromEntries(Object.entries(d.ctx ?? {}).map(([k, v]) => [k, String(v).replaceAll(" or ", joiner)]));
  const text = template.replace(/\{(\w+)\}/g, (m, name) => (name in ctx ? ctx[name] : m));
  return /\{\w+\}/.test(text) ? d.msg : text;
}

// Chromium keeps text it shaped while a CJK face was still loading in the last-resort font
// (boxes) until something lays it out again; on a box with no CJK font that is the whole zh
// page. One synchronous re-layout when a Meshscope CJK face arrives re-shapes it; the face may
// also have arrived before this module ran.
const isOurs = (f) => f.family.includes("Meshscope CJK");
function reshape() {
  const { scrollX, scrollY } = window;
  document.body.style.display = "none";
  void document.body.offsetHeight;
  document.body.style.display = "";
  window.scrollTo(scrollX, scrollY);
}
if (document.fonts) {
  document.fonts.addEventListener("loadingdone", (ev) => { if (ev.fontfaces.some(isOurs)) reshape(); });
  if ([...document.fonts].some((f) => isOurs(f) && f.status === "loaded")) reshape();
}
