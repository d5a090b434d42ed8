// The page's strings, embedded by the server in its page-data JSON for one language.
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
