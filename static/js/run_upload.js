// /runs: upload traces or logs as a run (issue 25). One file is sent as it is; several are
// packed into one .tar in the browser (a Blob of the files' own blobs, nothing read into
// memory), since the server takes one raw body per upload (POST /api/runs/import, no
// multipart). XMLHttpRequest, not fetch: it reports upload progress. A folder (chosen, or
// dropped) keeps its files' paths in the tar, so torchtitan's profiling cycles
// (traces/iteration_N/rankK_trace.json) stay apart as the server reads them (cycles.py).
import { errorText, fill, lang, tr, trOr } from "./i18n.js";

const ROUTE = "/api/runs/import";
const RUN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const $ = (id) => document.getElementById(id);
const langQuery = lang === "zh" ? "?lang=zh" : "";
let chosen = [];

// The name the server takes (app/importers/upload.py NAME): letters, digits, . _ + -.
function safeName(name) {
  const plain = name.replace(/[^A-Za-z0-9._+-]/g, "_").replace(/^[.+-]+/, "");
  return (plain.length > 99 ? plain.slice(-99).replace(/^[.+-]+/, "") : plain) || "upload";
}

// A folder's file keeps its path, each part made safe as a name is; a file chosen alone has
// only its name.
const TRACE = /\.json(\.gz)?$/;
const dropPaths = new WeakMap(); // a dropped folder's File -> its path under the drop
const rawPath = (f) => dropPaths.get(f) || f.webkitRelativePath || f.name; // as the user named it
const pathOf = (f) => rawPath(f).split("/").filter(Boolean).map(safeName).join("/"); // in the tar

// ustar keeps a path of up to 100 bytes in its name field, and a longer one split at a "/"
// into a prefix of up to 155 and a name of up to 100 (IEEE Std 1003.1, ustar format).
function splitPath(path) {
  if (path.length <= 100) return ["", path];
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
    if (i <= 155 && path.length - i - 1 <= 100) return [path.slice(0, i), path.slice(i + 1)];
  }
  return ["", path.split("/").at(-1).slice(-99)];
}

// One POSIX ustar header (IEEE Std 1003.1, pax "ustar Interchange Format"): octal fields,
// the checksum the sum of the header's bytes with its own field read as spaces.
function tarHeader(path, size) {
  const h = new Uint8Array(512);
  const put = (text, at) => { for (let i = 0; i < text.length; i++) h[at + i] = text.charCodeAt(i); };
  const octal = (n, width) => n.toString(8).padStart(width - 1, "0") + "\0";
  const [prefix, name] = splitPath(path);
  put(name, 0);
  put(prefix, 345);
  put(octal(0o644, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  put(octal(size, 12), 124);
  put(octal(Math.floor(Date.now() / 1000), 12), 136);
  put("        ", 148);
  put("0", 156);
  put("ustar\0", 257);
  put("00", 263);
  put(octal(h.reduce((a, b) => a + b, 0), 7) + " ", 148);
  return h;
}

function tarOf(files) {
  const parts = [];
  const seen = new Set();
  for (const f of files) {
    let name = pathOf(f);
    for (let i = 2; seen.has(name); i++) name = `${i}_${pathOf(f)}`;
    seen.add(name);
    parts.push(tarHeader(name, f.size), f, new Uint8Array((512 - (f.size % 512)) % 512));
  }
  parts.push(new Uint8Array(1024)); // two zero blocks end the archive
  return new Blob(parts, { type: "application/x-tar" });
}

const mb = (bytes) => (bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 1);

const SHOWN = 8; // a folder may hold a thousand ranks' files: name the first few
const listed = (files) =>
  files.slice(0, SHOWN).map(rawPath).join(", ") + (files.length > SHOWN ? `, … (+${files.length - SHOWN})` : "");

// A folder's traces, when it has any: a tar takes traces alone (app/importers/trace_tar.py),
// and a profiler's folder may hold other files (memory snapshots, notes).
function choose(files, folder = false) {
  const all = [...files];
  const traces = all.filter((f) => TRACE.test(f.name));
  chosen = folder && traces.length ? traces : all;
  const total = chosen.reduce((a, f) => a + f.size, 0);
  const left = all.length - chosen.length;
  $("upload-chosen").textContent = chosen.length
    ? `${fill("live.upload.chosen", { n: chosen.length, mb: mb(total) })}: ${listed(chosen)}` +
      (left ? ` (${fill("live.upload.skipped", { n: left })})` : "")
    : tr("live.upload.drop");
  // A run name from the folder, or the first file, when the user has not typed one.
  if (chosen.length && !$("upload-run").value) {
    const base = folder ? rawPath(chosen[0]).split("/")[0] : chosen[0].name;
    $("upload-run").value = safeName(base.replace(/\.(json|jsonl|log|txt|out|tar|tgz)(\.gz)?$/, "")).slice(0, 64);
  }
}

function query() {
  const q = new URLSearchParams({ run: $("upload-run").value.trim() });
  for (const k of ["dp", "tp", "pp", "cp", "ep", "order", "scenario"]) {
    const v = $(`upload-${k}`).value.trim();
    if (v) q.set(k, v);
  }
  return q;
}

function say(status, error = "") {
  $("upload-status").textContent = status;
  $("upload-error").textContent = error;
}

// The server's refusal in the page's language where the catalogue words it (errorText: a
// refused file's detail is keyed, app/core/traces/refusals.py), each detail after what it
// names: the file, or the field. A one-sentence refusal (401, 403, 413, 429, 503) is worded
// by its status on a page in another language; English keeps the server's own sentence.
function refusal(status, body) {
  const detail = body?.detail;
  if (typeof detail === "string") return lang === "en" ? detail : trOr(`live.upload.why.${status}`, detail);
  if (!Array.isArray(detail) || !detail.length) return `HTTP ${status}`;
  return detail.map((d) => (d.loc?.[0] === "query" ? `${d.loc.at(-1)}: ${errorText(d)}` : errorText(d))).join("; ");
}

// The import's report in the page's language: each line's key filled from the catalogue
// (app/importers/import_report.py keys it), the head unindented; English, or a server that
// sends no keys, shows the CLI's own text.
function reportText(body) {
  if (lang === "en" || !Array.isArray(body.said)) return body.summary;
  const lines = body.said.map((s) => trOr(`live.import.${s.key}`, null) && fill(`live.import.${s.key}`, s.params));
  if (lines.some((text) => !text)) return body.summary;
  return lines.map((text, i) => (i ? `  ${text}` : text)).join("\n");
}

function done(body) {
  say(fill("live.upload.done", { stored: body.stored, records: body.records, ranks: body.ranks }));
  const link = Object.assign(document.createElement("a"), {
    id: "upload-link", href: `${body.url}${langQuery}`, textContent: fill("live.upload.open", { run: body.run }),
  });
  $("upload-status").append(" ", link);
  $("upload-summary").textContent = reportText(body);
  $("upload-summary").hidden = false;
  document.dispatchEvent(new Event("runs:changed")); // live_runs.js refreshes the table
}

function send(ev) {
  ev.preventDefault();
  $("upload-summary").hidden = true;
  if (!chosen.length) return say("", tr("live.upload.no_files"));
  // The server's rule (protocol.RUN_NAME_PATTERN), said in words before anything is sent:
  // its 422 would quote the regular expression.
  if (!RUN_NAME.test($("upload-run").value.trim())) return say("", tr("live.upload.bad_run"));
  const one = chosen.length === 1;
  const body = one ? chosen[0] : tarOf(chosen);
  const q = query();
  q.set("name", one ? safeName(chosen[0].name) : "upload.tar");
  const xhr = new XMLHttpRequest();
  xhr.open("POST", `${ROUTE}?${q}`);
  xhr.setRequestHeader("Authorization", `Bearer ${$("upload-token").value.trim()}`);
  xhr.setRequestHeader("Content-Type", "application/octet-stream");
  const bar = $("upload-progress");
  bar.hidden = false;
  bar.value = 0;
  xhr.upload.onprogress = (e) => {
    if (!e.lengthComputable) return;
    bar.value = e.loaded / e.total;
    say(fill("live.upload.sending", { sent: mb(e.loaded), total: mb(e.total), pct: Math.round((100 * e.loaded) / e.total) }));
  };
  xhr.upload.onload = () => say(tr("live.upload.reading"));
  xhr.onload = () => {
    $("upload-send").disabled = false;
    bar.hidden = true;
    let answer = null;
    try { answer = JSON.parse(xhr.responseText); } catch { /* not JSON: the status says it */ }
    if (xhr.status === 200 && answer) return done(answer);
    say("", `${tr("live.upload.failed")} (${xhr.status}): ${refusal(xhr.status, answer)}`);
  };
  xhr.onerror = () => {
    $("upload-send").disabled = false;
    bar.hidden = true;
    say("", tr("live.upload.network"));
  };
  $("upload-send").disabled = true;
  say(fill("live.upload.sending", { sent: mb(0), total: mb(body.size), pct: 0 }));
  xhr.send(body);
}

// A dropped folder's files, with their paths under it (the File and Directory Entries API:
// readEntries answers in batches until an empty one).
async function walk(entry, path) {
  if (entry.isFile) {
    const file = await new Promise((ok, fail) => entry.file(ok, fail));
    dropPaths.set(file, `${path}${file.name}`);
    return [file];
  }
  const reader = entry.createReader();
  const out = [];
  for (;;) {
    const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
    if (!batch.length) return out;
    for (const e of batch) out.push(...(await walk(e, `${path}${entry.name}/`)));
  }
}

async function dropped(dt) {
  const entries = [...(dt.items || [])].map((i) => i.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.some((e) => e.isDirectory)) return choose(dt.files);
  const files = [];
  for (const e of entries) files.push(...(await walk(e, "")));
  choose(files, true);
}

const drop = $("upload-drop");
$("upload-files").addEventListener("change", (ev) => choose(ev.target.files));
$("upload-folder").addEventListener("change", (ev) => choose(ev.target.files, true));
drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.dataset.over = ""; });
drop.addEventListener("dragleave", () => { delete drop.dataset.over; });
drop.addEventListener("drop", (ev) => {
  ev.preventDefault();
  delete drop.dataset.over;
  dropped(ev.dataTransfer);
});
$("upload-form").addEventListener("submit", send);
