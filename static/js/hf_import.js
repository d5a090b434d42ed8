// "Import a Hugging Face config.json": the server maps the config to scenario fields; the
// page lists what the file set, merges it into its own URL and offers that link, so the
// import is a share link too. The training length stays the page's: a config.json gives the
// longest context the model serves, not the length it trains at.
import { errorText, fill } from "./i18n.js";
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
  if (lines.length) $("hf-result").replaceChildren();
  $("hf-error").textContent = lines.length ? `${tr("hf.failed")} — ${lines.join("; ")}` : "";
}

// The seq_len this page shows: its URL's, else the model it drew (a preset's own length).
function pageSeqLen() {
  const data = JSON.parse($("page-data")?.textContent || "{}");
  return Number(params().seq_len ?? data?.model?.model?.seq_len ?? 0);
}

// The current URL with the imported fields laid over it: dp, tp, pp, lang... are kept, and
// so is seq_len unless the file sets it (a learned position table), capped at the context.
function merged(body) {
  const next = new URLSearchParams(params());
  for (const [k, v] of Object.entries(body.query)) next.set(k, String(v));
  const own = pageSeqLen();
  const seq = "seq_len" in body.query ? null : own && Math.min(own, body.context_length);
  if (seq) next.set("seq_len", String(seq));
  return { url: `${location.pathname}?${next}`, seq, capped: seq !== null && seq < own };
}

function line(text, id) {
  const p = document.createElement("p");
  p.className = "hint";
  p.textContent = text;
  if (id) p.id = id;
  return p;
}

// What the file set (each field with its config key), what stayed, and the link to apply.
function showImported(body) {
  const { url, seq, capped } = merged(body);
  const set = Object.entries(body.query)
    .filter(([k]) => k !== "model")
    .map(([k, v]) => `${k} ${v} (${body.from_config[k]})`)
    .join(", ");
  const nodes = [line(fill("hf.set_by_file", { fields: set }), "hf-set")];
  const ctx = body.context_length;
  if (seq !== null && seq) {
    const key = capped ? "hf.seq_capped" : "hf.seq_kept";
    nodes.push(line(fill(key, { seq, context: ctx }), "hf-kept"));
  }
  const apply = document.createElement("a");
  apply.id = "hf-apply";
  apply.href = url;
  apply.textContent = fill("hf.apply", {});
  nodes.push(apply);
  $("hf-result").replaceChildren(...nodes);
  apply.focus();
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
    if (res.ok && body?.query) return showImported(body);
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
