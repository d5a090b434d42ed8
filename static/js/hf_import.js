// "Import a Hugging Face config.json": the server maps the config to scenario fields; the
// page merges them into its own URL and navigates there, so the import is a share link too.
import { errorText } from "./i18n.js";
import { params, tr } from "./state.js";

const ROUTE = "/api/model/from-hf-config";
const $ = (id) => document.getElementById(id);

// One line per refusal: the config key the server names, then its reason.
function messages(status, body) {
  const detail = Array.isArray(body?.detail) ? body.detail : [];
  if (!detail.length) return [`HTTP ${status}`];
  return detail.map((d) => {
    const key = (d.loc ?? []).filter((x) => x !== "body").join(".");
    return key ? `${key}: ${errorText(d)}` : errorText(d);
  });
}

function showError(lines) {
  $("hf-error").textContent = lines.length ? `${tr("hf.failed")} — ${lines.join("; ")}` : "";
}

// The current URL with the imported fields laid over it: dp, tp, pp, lang... are kept.
function merged(query) {
  const next = new URLSearchParams(params());
  for (const [k, v] of Object.entries(query)) next.set(k, String(v));
  return `${location.pathname}?${next}`;
}

async function submit() {
  const text = $("hf-config").value;
  if (!text.trim()) return showError([tr("hf.empty")]);
  const button = $("hf-submit");
  button.disabled = true;
  button.textContent = tr("hf.busy");
  try {
    const res = await fetch(ROUTE, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: text,
    });
    const body = await res.json().catch(() => null);
    if (res.ok && body?.query) return location.assign(merged(body.query));
    showError(messages(res.status, body));
  } catch {
    showError([tr("error.network")]);
  } finally {
    button.disabled = false;
    button.textContent = tr("hf.submit");
  }
}

// A chosen file fills the textarea: one text to submit, and the user sees what is sent.
async function load(ev) {
  const file = ev.target.files?.[0];
  if (!file) return;
  try {
    $("hf-config").value = await file.text();
    showError([]);
  } catch {
    showError([file.name]);
  }
}

if ($("hf-import")) {
  $("hf-submit").addEventListener("click", submit);
  $("hf-choose").addEventListener("click", () => $("hf-file").click());
  $("hf-file").addEventListener("change", load);
}
