// Compare page: 2-4 scenarios (or a preset) side by side. The URL is the share link:
// s=<scenario query> per column, or preset=<name> plus the base scenario's parameters.
import { bandNode } from "./band.js";
import { drawCharts, TimelineFeed } from "./compare_charts.js";
import { bindForm, showErrors } from "./controls.js";
import { copyAsMenu } from "./copy_as.js";
import { bytes, el, pct, seconds } from "./fmt.js";
import { categorical } from "./palette.js";
import { whenPlotly } from "./plot.js";
import { errorText, fill as fillKey, trOr } from "./i18n.js";
import { defaults, tr } from "./state.js";

const $ = (id) => document.getElementById(id);
const data = JSON.parse($("page-data").textContent);
const lang = data.state.lang;
const EDIT_3D = [["dp", "n"], ["tp", "n"], ["pp", "n"], ["schedule", "schedules"], ["microbatches", "n"],
  ["virtual_stages", "n"], ["model", "models"], ["hardware", "hardware"]];
// Context and expert parallelism and the routing imbalance get their own boxes once any
// column sets one (typed into "more"); a 3D comparison keeps its eight.
const EDIT_5D = [["cp", "n"], ["ep", "n"], ["routing_imbalance", "n"]];
const editFields = () => {
  const used = cmp?.members?.some((m) => EDIT_5D.some(([f]) => f in (m.query ?? {})));
  return used ? [...EDIT_3D, ...EDIT_5D] : EDIT_3D;
};
let cmp = data.comparison;
let seq = 0;
const picked = new Set();

const enc = (q) => new URLSearchParams(q).toString();
const withLang = (pairs) => (lang === "en" ? pairs : [...pairs, ["lang", lang]]);
const editable = () => cmp && cmp.members.length <= cmp.limits.max;

function isDefault(k, v) {
  const d = defaults[k];
  if (v === "" || v === null || v === undefined) return true;
  return d !== null && d !== undefined && String(v).toLowerCase() === String(d).toLowerCase();
}

function errorsOf(body) {
  const out = {};
  for (const d of body?.detail ?? []) {
    const key = (d.loc ?? []).filter((x) => x !== "query").join(".") || "query";
    out[key] ??= errorText(d);
  }
  return out;
}

function setUrl(pairs) {
  const qs = enc(withLang(pairs));
  history.replaceState(null, "", `/compare${qs ? `?${qs}` : ""}`);
  updateLinks();
}

// Every change: the URL first, then /api/compare with the same pairs (minus the language),
// as lines: each column is drawn as soon as the server has evaluated it (compare_stream.py).
async function go(pairs) {
  setUrl(pairs);
  const mine = ++seq;
  let res;
  let feed;
  try {
    res = await fetch(`/api/compare?${enc(pairs)}`, { headers: { Accept: "application/x-ndjson" } });
    if (mine !== seq) return;
    if (!res.ok) {
      const body = await res.json().catch(() => null);
      showErrors(res.status === 422 ? errorsOf(body) : { query: res.statusText });
      document.body.dataset.state = "error";
      return;
    }
    feed = await receive(res, mine);
    if (!feed) return;
  } catch {
    if (mine === seq) showErrors({ query: tr("error.network") });
    return;
  }
  await render(feed);
}

// Reads the lines as they come: the timelines' feed, or null when a newer request took over.
async function receive(res, mine) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let feed = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (mine !== seq) {
      reader.cancel();
      return null;
    }
    buf += value ?? "";
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      feed = piece(JSON.parse(buf.slice(0, nl)), feed);
      buf = buf.slice(nl + 1);
    }
    if (done) return feed;
  }
}

// One line: the head starts an empty comparison, each member is drawn at once (its card and
// its timeline), the tail brings what needs every column (verdicts, winner, axis, diff).
function piece(p, feed) {
  if (p.head) {
    cmp = { ...p.head, members: [], winner: null, time_axis: null, diff: [] };
    layoutFor(cmp);
    // The previous columns stay until their successors come (no blank page on an edit);
    // columns past the new count go now.
    for (const card of [...$("columns").children]) if (Number(card.dataset.index) >= cmp.count) card.remove();
    $("add-scenario").disabled = true; // until every column is in
    progress(0);
    return new TimelineFeed(cmp);
  }
  if (p.member) {
    cmp.members.push(p.member);
    const card = column(p.member);
    const old = $("columns").querySelector(`:scope > [data-index="${p.member.index}"]`);
    if (old) old.replaceWith(card);
    else $("columns").append(card);
    feed.add(p.member);
    // Plotly (preloaded) is run now, while the server evaluates the other columns, not
    // before the first one is drawn nor after the last one.
    if (p.member.index === 0) whenPlotly().catch(() => {}); // drawCharts reports a failure
    progress(cmp.members.length);
  } else if (p.tail) {
    const { verdicts, ...rest } = p.tail;
    for (const v of verdicts) Object.assign(cmp.members[v.index], v);
    Object.assign(cmp, rest);
  }
  return feed;
}

function progress(done) {
  const box = $("cmp-progress");
  box.hidden = done >= cmp.count;
  box.textContent = fillKey("cmp.progress", { done: done + 1, total: cmp.count });
}

const queries = () => cmp.members.map((m) => ({ ...m.query }));
const explicit = (qs) => go(qs.map((q) => ["s", enc(q)]));

function edit(i, name, value) {
  const qs = queries();
  if (name === "more") {
    const fields = editFields();
    for (const k of Object.keys(qs[i])) if (!fields.some(([f]) => f === k)) delete qs[i][k];
    for (const [k, v] of new URLSearchParams(value)) if (!isDefault(k, v)) qs[i][k] = v;
  } else if (isDefault(name, value)) delete qs[i][name];
  else qs[i][name] = value;
  explicit(qs);
}

function control(m, name, kind) {
  const value = m.query[name] ?? String(defaults[name] ?? "");
  let input;
  if (kind === "n") {
    input = el("input", { type: "text", inputmode: "numeric", name, value });
  } else {
    input = el("select", { name });
    // The value stays the URL's; the label is the catalogue's word where it has one (opt.schedule.naive).
    for (const o of data.options[kind]) {
      input.append(el("option", o === value ? { value: o, selected: "" } : { value: o }, trOr(`opt.${name}.${o}`, o)));
    }
  }
  input.dataset.index = String(m.index);
  const box = el("label", { class: "ctl", "data-field": name });
  box.append(el("span", { class: "ctl-label" }, tr(`field.${name}`)), input,
    el("output", { class: "err", "data-err-for": `s.${m.index}.${name}` }));
  return box;
}

function editor(m) {
  const form = el("form", { class: "cmp-editor", autocomplete: "off", onsubmit: "return false" });
  const fields = editFields();
  for (const [name, kind] of fields) form.append(control(m, name, kind));
  const rest = Object.entries(m.query).filter(([k]) => !fields.some(([f]) => f === k));
  const more = el("label", { class: "ctl more" });
  const input = el("input", { type: "text", name: "more", value: enc(rest), placeholder: "zero=1&recompute=full" });
  input.dataset.index = String(m.index);
  more.append(el("span", { class: "ctl-label" }, tr("cmp.more")), input,
    el("output", { class: "err", "data-err-for": `s.${m.index}` }));
  form.append(more);
  form.addEventListener("change", (ev) => ev.target.name && edit(m.index, ev.target.name, ev.target.value.trim()));
  return form;
}

function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, k) => {
    const v = values[k];
    if (k.endsWith("_bytes")) return bytes(v);
    if (["ratio", "share", "fraction"].includes(k)) return pct(v, 0);
    return String(v);
  });
}

// Compact, locale-aware counts for text ("63.7K", "6.37万"): never exponent notation.
const COMPACT = new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en", { notation: "compact", maximumSignificantDigits: 3 });
const compact = (v) => (Number.isFinite(v) ? COMPACT.format(v) : "—");

function stats(m) {
  const s = m.summary;
  const rows = [["perf.step_time", seconds(s.step_time_s)], ["perf.mfu", pct(s.mfu)],
    ["perf.tokens", compact(s.tokens_per_s)], ["cmp.s.global_batch", String(s.global_batch)],
    ["cmp.s.bubble", pct(s.bubble_fraction)], ["cmp.s.bubble_ideal", pct(s.bubble_over_ideal)],
    ["cmp.s.peak_inflight", String(s.peak_inflight)], ["cmp.s.peak_act", bytes(s.peak_activation_bytes)],
    ["cmp.s.p2p", bytes(s.p2p_bytes)], ["cmp.s.memory", `${bytes(s.peak_bytes)} / ${bytes(s.capacity_bytes)}`]];
  const box = el("div", { class: "stats" });
  for (const [key, value] of rows) {
    const row = el("div", { class: `stat${key === "cmp.s.memory" && !s.fits ? " oom" : ""}`, "data-key": key });
    row.append(el("span", { class: "label" }, tr(key)), el("span", { class: "value" }, value));
    box.append(row);
    if (key === "perf.step_time" && m.error_band) box.append(bandNode(m.error_band));
  }
  return box;
}

// A schedule as the page's language words it (opt.schedule.naive); names of art stay names.
const scheduleWord = (name) => trOr(`opt.schedule.${name}`, name);

function column(m) {
  const schedules = cmp.preset === "schedules";
  const card = el("article", { class: `card cmp-col${m.valid ? "" : " invalid"}${m.best ? " best" : ""}`,
    "data-index": m.index, "data-query": enc(m.query), style: `border-top-color:${categorical(m.index)}` });
  const head = el("header", { class: "card-head" });
  head.append(el("h3", {}, `${m.index + 1}. ${schedules ? scheduleWord(m.scenario.schedule) : tr(`cmp.role.${m.role}`)}`));
  if (m.best) head.append(el("span", { class: "badge within" }, tr("cmp.best")));
  if (m.valid && !m.summary.fits) head.append(el("span", { class: "badge cross" }, tr("mem.oom")));
  if (m.valid && m.ranked === false) head.append(el("span", { class: "badge not-training" }, tr("cmp.chart.not_training_short")));
  if (editable() && cmp.members.length > cmp.limits.min) {
    const rm = el("button", { type: "button", class: "remove", title: tr("cmp.remove") }, "×");
    rm.addEventListener("click", () => explicit(queries().filter((_, i) => i !== m.index)));
    head.append(rm);
  }
  const sc = m.scenario;
  const axes = sc.cp > 1 || sc.ep > 1 ? ` · CP = ${sc.cp} · EP = ${sc.ep}` : "";
  card.append(head, el("p", { class: "muted" }, `DP×TP×PP = ${sc.dp}×${sc.tp}×${sc.pp}${axes} · ${scheduleWord(sc.schedule)} · m = ${sc.microbatches}`));
  if (editable()) card.append(editor(m));
  else {
    const box = el("label", { class: "pick" });
    const cb = el("input", { type: "checkbox", name: "pick", value: String(m.index) });
    cb.checked = picked.has(m.index);
    cb.addEventListener("change", () => (cb.checked ? picked.add(m.index) : picked.delete(m.index), pickState()));
    box.append(cb, ` ${tr("cmp.pick")}`);
    card.append(box);
  }
  const links = el("p", { class: "links" });
  const q = enc(withLang(Object.entries(m.query)));
  links.append(el("a", { href: `/?${q}`, "data-link": "overview" }, tr("cmp.open.overview")), " · ",
    el("a", { href: `/flow?${q}`, "data-link": "flow" }, tr("cmp.open.flow")));
  card.append(links, copyAsMenu(() => enc(Object.entries(m.query))));
  if (!m.valid) {
    // The core's reason in the page's language: its message key's template, else English.
    const reason = errorText({ type: m.error.key ?? "value_error", msg: m.error.reason, ctx: m.error.params });
    card.append(el("p", { class: "banner error reason" }, `${tr("cmp.invalid")}: ${m.error.field} — ${reason}`));
    return card;
  }
  card.append(stats(m));
  const why = el("ul", { class: "why" });
  for (const w of m.why ?? []) why.append(el("li", { "data-code": w.code }, fill(tr(`cmp.why.${w.code}`), w)));
  card.append(el("h4", {}, tr("cmp.why")), why);
  if (cmp.preset === "factory") card.append(el("p", { class: "teach-note" }, tr(`cmp.teach.${m.role}`)));
  return card;
}

function pickState() {
  const go_ = $("pick-go");
  go_.disabled = picked.size < cmp.limits.min || picked.size > cmp.limits.max;
}

function updateLinks() {
  const first = cmp?.members?.length ? Object.entries(cmp.members[0].query) : [];
  const q = enc(withLang(first));
  const hrefs = { overview: `/?${q}`, flow: `/flow?${q}`, api: `/api/scenario?${enc(first)}`,
    compare: location.pathname + location.search };
  for (const a of document.querySelectorAll("[data-nav]")) if (hrefs[a.dataset.nav]) a.href = hrefs[a.dataset.nav];
}

// The page's parts that depend only on the request (the head): which hints and forms show.
function layoutFor(c) {
  showErrors({});
  document.body.dataset.state = "ok";
  const presetMode = c.preset !== null;
  $("base-form").hidden = !presetMode;
  $("custom-hint").hidden = presetMode;
  $("cmp-schedules-note").hidden = c.preset !== "schedules";
  $("cmp-intro").hidden = c.preset === "schedules";
  if (presetMode) fillBase(Object.fromEntries(c.urlquery.filter(([k]) => k !== "preset")));
}

async function render(feed = null) {
  layoutFor(cmp);
  updateLinks();
  $("cmp-progress").hidden = true;
  $("add-scenario").disabled = !editable() || cmp.members.length >= cmp.limits.max;
  $("pick-hint").hidden = $("pick-go").hidden = editable();
  picked.clear();
  pickState();
  const box = $("columns");
  box.replaceChildren(...cmp.members.map(column));
  box.dataset.count = String(cmp.members.length);
  box.dataset.preset = cmp.preset ?? "";
  await drawCharts(cmp, feed);
  document.body.dataset.ready = "compare";
}

function fillBase(base) {
  for (const input of $("controls").elements) {
    if (!input.name) continue;
    const v = base[input.name] ?? defaults[input.name] ?? "";
    if (input.type === "checkbox") input.checked = String(v) === "true";
    else input.value = String(v);
  }
}

function preset(name) {
  const base = cmp.preset ? cmp.urlquery.filter(([k]) => k !== "preset") : Object.entries(cmp.members[0].query);
  go([["preset", name], ...base]);
}

function bindHeader() {
  $("copy-link").addEventListener("click", async () => {
    const status = $("copy-status");
    try {
      await navigator.clipboard.writeText(location.href);
      status.textContent = tr("copy.done");
    } catch {
      status.textContent = location.href;
    }
  });
  $("lang-toggle").addEventListener("click", (ev) => {
    const p = new URLSearchParams(location.search);
    const to = ev.currentTarget.dataset.to;
    if (to === "en") p.delete("lang");
    else p.set("lang", to);
    location.assign(`/compare?${p}`); // the server renders every label in the new language
  });
}

for (const b of document.querySelectorAll("button.preset")) b.addEventListener("click", () => preset(b.dataset.preset));
$("add-scenario").addEventListener("click", () => explicit([...queries(), queries().at(-1)]));
$("pick-go").addEventListener("click", () => explicit(queries().filter((_, i) => picked.has(i))));
bindHeader();
// The base form edits the preset's base, which is the URL's own parameters in preset mode.
bindForm(() => go([...new URLSearchParams(location.search)].filter(([k]) => k !== "lang")));
if (cmp?.members === null) {
  go(cmp.urlquery); // a big preset: the page came at once, its columns come as lines
} else if (cmp) {
  setUrl(cmp.urlquery); // canonical: a bare /compare becomes the preset it shows
  render();
} else {
  updateLinks();
  $("add-scenario").disabled = true;
  document.body.dataset.state = "error";
  document.body.dataset.ready = "compare";
}
