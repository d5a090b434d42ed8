// /runs: relative times, then a refresh of the table every few seconds.
import { clock } from "./fmt.js";
import { meshTail } from "./live_ranks.js";
import { fill, lang, switchLang } from "./i18n.js";

const REFRESH_MS = 5000;
const langQuery = lang === "zh" ? "?lang=zh" : "";

function ago(t) {
  const s = Math.max(0, Date.now() / 1000 - t);
  if (s < 90) return fill("live.ago_s", { n: Math.round(s) });
  if (s < 5400) return fill("live.ago_min", { n: Math.round(s / 60) });
  return clock(t, true);
}

function cell(text, attrs = {}) {
  const td = document.createElement("td");
  Object.assign(td, attrs);
  td.textContent = text;
  return td;
}

function row(r) {
  const tr = document.createElement("tr");
  tr.dataset.run = r.run;
  const link = Object.assign(document.createElement("a"), { href: `/runs/${encodeURIComponent(r.run)}${langQuery}`, textContent: r.run });
  const name = document.createElement("td");
  name.append(link);
  // The run's one status and its short line, worded by the server (app.live.verdict).
  const status = document.createElement("td");
  const box = Object.assign(document.createElement("span"), { className: "verdict-cell" });
  const badge = Object.assign(document.createElement("span"), { className: "status", textContent: r.verdict.label });
  badge.dataset.status = r.verdict.status;
  box.append(badge);
  if (r.verdict.summary) box.append(" ", Object.assign(document.createElement("span"), { className: "verdict-short", textContent: r.verdict.summary }));
  status.append(box);
  const done = r.last_step === null ? 0 : r.last_step + 1;
  const mesh = `dp ${r.dp} × tp ${r.tp} × pp ${r.pp}${meshTail(r)}`;
  tr.append(name, status, cell(mesh), cell(`${r.schedule} · m ${r.microbatches}`),
    cell(`${done}/${r.steps}`), cell(String(r.world)), cell(ago(r.updated)));
  // Each cell carries its column's name, which a phone shows as the line's label (live.css).
  const labels = [...document.querySelectorAll("#runs-table thead th")].map((th) => th.textContent);
  [...tr.children].forEach((td, i) => { td.dataset.label = labels[i] ?? ""; });
  return tr;
}

async function refresh() {
  try {
    const res = await fetch(`/api/runs${langQuery}`);
    const { runs } = await res.json();
    if (runs.length) document.querySelector("#runs-table tbody").replaceChildren(...runs.map(row));
  } catch (err) {
    // the next refresh tries again
  }
}

for (const td of document.querySelectorAll("td.when")) td.textContent = ago(Number(td.dataset.t));
setInterval(refresh, REFRESH_MS);
// An upload on this page (run_upload.js) shows its run at once, not at the next tick.
document.addEventListener("runs:changed", refresh);
document.getElementById("lang-toggle").addEventListener("click", (ev) => switchLang(ev.currentTarget.dataset.to));
