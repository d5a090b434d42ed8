// /runs/{run}: the live page. Follows the run's feed, keeps a per-step tally of which ranks
// reported, and draws the server's analysis of the latest (or the chosen) step. The URL is
// the share link: ?step=S pins a step, no step follows the latest.
import { clock, seconds } from "./fmt.js";
import { fill, lang, tr, trOr } from "./i18n.js";
import { drawBubble, drawHeatmap, drawResiduals, Trend } from "./live_charts.js";
import { drawMemory } from "./live_memory.js";
import { drawRankStates, meshTail, rankLegend } from "./live_ranks.js";
import { fetchStragglers, markHeatmap, markRankStates, showStragglers } from "./run_stragglers.js";
import { LiveStream } from "./live_stream.js";
import { followWholeRun } from "./run_whole.js";
import { bindPageHeader } from "./page_header.js";
import { legend, LiveTimeline } from "./live_timeline.js";

const page = JSON.parse(document.getElementById("page-data").textContent);
const run = page.run;
const root = document.body;
const $ = (id) => document.getElementById(id);
const ANALYSIS_EVERY_MS = 700; // at most this often while following a fast run

const state = {
  info: page.info, world: 0, whole: 0, attempt: 0, follow: page.step === null, pinned: page.step,
  steps: new Map(), latest: -1, drawn: null, analysis: null, inflight: false, again: false,
  waiting: page.waiting, // announced, no step record yet
  verdict: page.verdict?.status ?? "", // the server's one status for the run
  feed: "connecting", feedComplete: false,
  stragglers: null, // the last /stragglers answer: outlines survive redraws of the grids
};
const LIVE = new Set(["live", "waiting", "stale"]); // a feed that is behind matters only then
const timeline = new LiveTimeline($("live-timeline"), $("live-overlay"));
const trend = new Trend($("trend"));

function setInfo(info, world, whole) {
  state.info = info;
  state.world = world ?? 0; // the server's count of ranks in the mesh
  state.whole = whole ?? state.world; // ranks that make a step whole (the server's whole_at)
  if (!info) return;
  $("steps-total").textContent = String(info.steps);
  $("run-config").textContent = configText(info);
}

function configText(info) {
  const chunks = info.virtual_stages > 1 ? fill("live.chunks", { v: info.virtual_stages }) : "";
  return fill("live.config", { ...info, pp: `${info.pp}${meshTail(info)}`, m: info.microbatches, chunks });
}

function stepOf(step) {
  if (!state.steps.has(step)) state.steps.set(step, { ranks: new Set(), count: 0, complete: false, time: null });
  return state.steps.get(step);
}

function tally() {
  let complete = 0, records = 0;
  for (const s of state.steps.values()) {
    const n = Math.max(s.count, s.ranks.size);
    records += n;
    if (s.complete || (state.whole && n >= state.whole)) complete += 1;
  }
  $("steps-complete").textContent = root.dataset.stepsComplete = String(complete);
  $("records-seen").textContent = root.dataset.recordsSeen = String(records);
  const slider = $("step-slider");
  slider.max = String(Math.max(state.latest, 0));
  // After max: a pinned step beyond the old max would have been clamped.
  slider.value = state.follow ? slider.max : String(state.pinned);
}

// The run's one status and its sentences, as the server decided them (app.live.verdict):
// the page words nothing itself. The feed's state shows only while the run is live and the
// feed is behind; it is never a second badge.
function showVerdict(v, failedAt) {
  state.verdict = v.status;
  state.waiting = v.status === "waiting";
  $("run-waiting").hidden = !state.waiting;
  const badge = $("run-status");
  badge.dataset.status = v.status;
  badge.textContent = v.label;
  root.dataset.status = v.status;
  const box = $("run-verdict");
  box.dataset.status = v.status;
  box.replaceChildren(...v.lines.map((line) => Object.assign(document.createElement("p"), { textContent: line })));
  box.hidden = v.lines.length === 0;
  root.dataset.unreceived = String(v.records.in_spool);
  const when = failedAt && v.status === "failed" ? fill("live.last_event", { time: clock(failedAt) }) : "";
  $("run-reason").textContent = when;
  showFeed();
}

function showFeed() {
  const behind = LIVE.has(state.verdict) && !state.feedComplete;
  const el = $("stream-state");
  el.hidden = !behind;
  el.textContent = behind ? tr(`live.stream.${state.feed}`) : "";
}

function firstRecord() {
  state.waiting = false;
  $("run-waiting").hidden = true;
  stream.resync(); // "waiting" becomes "live": the server says so
}

function eventItem(e) {
  const li = document.createElement("li");
  const kind = trOr(`live.status.${e.kind}`, e.kind);
  // The server words a stored event's detail in the page's language (text, from its keys:
  // app/live/event_text.py); a status the stream just pushed has liveness's English reason
  // alone, shown on an English page, until the resync that follows it brings the worded one.
  const detail = e.text ?? (lang === "en" ? e.detail : "");
  li.textContent = `${clock(e.at)} · ${kind}${detail && detail !== e.kind ? `: ${detail}` : ""}`;
  return li;
}

function showEvents(events) {
  $("run-events").replaceChildren(...events.map(eventItem));
}

// The whole run over HTTP: after every (re)connect and every gap in the feed.
async function sync() {
  const res = await fetch(`/api/runs/${encodeURIComponent(run)}${lang === "en" ? "" : `?lang=${lang}`}`);
  if (res.status === 404) {
    $("run-reason").textContent = tr("live.no_record");
    await trend.reset([], 0);
    return;
  }
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const data = await res.json();
  setInfo(data.info, data.world, data.whole_at);
  state.attempt = data.attempt;
  for (const p of data.trend) {
    const s = stepOf(p.step);
    s.count = Math.max(s.count, p.ranks);
    s.time = p.step_time_s;
    s.complete = s.complete || p.ranks >= state.whole;
    if (s.complete) state.latest = Math.max(state.latest, p.step);
  }
  await trend.reset(data.trend.filter((p) => p.ranks >= state.whole), data.attempt);
  const last = data.trend.at(-1); // a reopened link shows the newest step time before any record
  if (last) $("last-step-time").textContent = seconds(last.step_time_s);
  showVerdict(data.verdict, data.failed_at);
  drawRankStates($("rank-states"), data.ranks, data.info);
  markRankStates($("rank-states"), state.stragglers);
  showEvents(data.events);
  tally();
  refreshAnalysis();
}

function onItems(items) {
  for (const it of items) {
    if (it.type === "record") {
      if (state.waiting) firstRecord();
      stepOf(it.step).ranks.add(it.rank);
      $("last-step-time").textContent = seconds(it.step_time_s);
    } else if (it.type === "step") {
      const s = stepOf(it.step);
      s.complete = true;
      s.time = it.step_time_s;
      state.latest = Math.max(state.latest, it.step);
      trend.add(it.step, it.step_time_s, it.attempt);
      if (state.follow) refreshAnalysis();
    } else if (it.type === "status") {
      drawRankStates($("rank-states"), it.ranks, state.info);
      markRankStates($("rank-states"), state.stragglers);
      $("run-events").append(eventItem({ at: Date.now() / 1000, kind: it.status, detail: it.reason }));
      stream.resync(); // the verdict (badge, sentences, counts) is the server's
    } else if (it.type === "stop") {
      stream.resync(); // a rank's partial record: what it was blocked in, for the verdict
    } else if (it.type === "attempt" && (it.attempt > state.attempt || !state.info)) {
      state.attempt = it.attempt;
      stream.resync(); // a resume supersedes steps: the tally and the trend are refetched
    }
  }
  tally();
}

function wantedStep() {
  return state.follow ? state.latest : state.pinned;
}

// One analysis request at a time; a request made meanwhile runs once the current one lands.
async function refreshAnalysis() {
  const step = wantedStep();
  if (step === null || step < 0) return;
  if (state.inflight) {
    state.again = true;
    return;
  }
  state.inflight = true;
  try {
    const res = await fetch(`/api/runs/${encodeURIComponent(run)}/analysis?step=${step}`);
    if (res.ok) await draw(await res.json());
  } finally {
    setTimeout(() => {
      state.inflight = false;
      if (state.again || wantedStep() !== state.drawn) {
        state.again = false;
        refreshAnalysis();
      }
    }, ANALYSIS_EVERY_MS);
  }
}

async function draw(a) {
  state.analysis = a;
  state.drawn = a.step;
  $("drawn-step").textContent = String(a.step);
  $("ranks-present").textContent = `${a.ranks_present}/${a.world}`;
  showCompare(a);
  $("left-out").textContent = a.measured.left_out ? fill("live.left_out", { n: a.measured.left_out }) : "";
  $("fold-note").textContent = a.fold ? fill("live.fold", a.fold) : "";
  legend($("live-legend"), new Set(a.measured.events.map((e) => e.kind)));
  await timeline.draw(a);
  await drawBubble($("bubble-chart"), $("bubble-table"), a);
  await drawHeatmap($("heatmap"), a, $("heat-metric").value);
  await drawStragglers(a);
  await drawResiduals($("residual-chart"), $("residual-table"), a);
  if (a.memory) drawMemory($("memory-table"), $("memory-hint"), $("memory-cpu-hint"), a.memory);
  showAdvice(a.advice);
  root.dataset.drawnStep = String(a.step);
}

// The drawn step's stragglers (cached by the server per window, as the analysis is); a busy
// server (429) leaves the last answer drawn.
async function drawStragglers(a) {
  const data = await fetchStragglers(run, a.step);
  if (data) {
    state.stragglers = data;
    showStragglers($("straggler-list"), $("straggler-hint"), data, state.info);
    markRankStates($("rank-states"), data);
  }
  await markHeatmap($("heatmap"), a, state.stragglers);
}

// Measured, its replay (this run's own F/B/W through the simulator) and the cost model's
// a-priori prediction, with the hardware the prediction was made on and why.
function showCompare(a) {
  const p = a.a_priori;
  const ok = p && p.error === undefined;
  const cells = {
    "measured-pipe": a.measured.pipeline_s, "measured-step": a.measured.step_time_s,
    "replay-pipe": a.replay?.makespan_s, "replay-step": a.replay?.step_time_s,
    "predicted-pipe": ok ? p.pipeline_s : undefined, "predicted-step": ok ? p.step_time_s : undefined,
  };
  for (const [id, v] of Object.entries(cells)) $(id).textContent = v === undefined || v === null ? "—" : seconds(v);
  let why = "";
  if (p && !ok) why = fill("live.apriori.error", { error: p.error });
  else if (p) {
    const basis = fill(`live.apriori.${p.basis}`, { peak: p.declared_peak_tflops, device: p.device });
    why = fill("live.apriori.on", { hw: p.hardware, why: basis });
  }
  $("apriori-basis").textContent = why;
  $("compare-table").dataset.hardware = p?.hardware ?? "";
  // The run's scenario in the flow view, with its measured F/B/W (app/live/replay_link.py).
  const link = $("replay-flow");
  link.hidden = !a.flow_query;
  if (a.flow_query) {
    const q = new URLSearchParams(a.flow_query);
    if (lang === "zh") q.set("lang", "zh");
    link.href = `/flow?${q}`;
  }
  // An axis of the run the scenario cannot draw (ep on a model with no experts) is said.
  const note = a.flow_query && a.flow_left_out?.includes("ep") ? fill("live.replay_flow_no_ep", { ep: state.info?.ep }) : "";
  $("replay-flow-note").textContent = note;
}

function showAdvice(lines) {
  const message = (l) => (lang === "zh" ? l.message_zh : l.message) ?? l.message;
  const items = lines.length ? lines.map(message) : [tr("live.advice_none")];
  $("advice").replaceChildren(...items.map((text, i) => {
    const li = document.createElement("li");
    li.textContent = text;
    if (lines[i]) li.dataset.rule = lines[i].rule;
    return li;
  }));
}

function pin(step) {
  state.follow = step === null;
  state.pinned = step;
  $("follow").checked = state.follow;
  const url = new URL(location.href);
  if (step === null) url.searchParams.delete("step");
  else url.searchParams.set("step", String(step));
  history.replaceState(null, "", url);
  refreshAnalysis();
}

function bind() {
  $("follow").checked = state.follow;
  $("step-slider").addEventListener("input", (ev) => pin(Number(ev.target.value)));
  $("follow").addEventListener("change", (ev) => pin(ev.target.checked ? null : state.drawn));
  $("heat-metric").addEventListener("change", async () => {
    if (!state.analysis) return;
    await drawHeatmap($("heatmap"), state.analysis, $("heat-metric").value);
    await markHeatmap($("heatmap"), state.analysis, state.stragglers);
  });
  bindPageHeader("live.copied");
  legend($("live-legend"));
  rankLegend($("rank-legend"));
}

const stream = new LiveStream(run, {
  onItems,
  onResync: sync,
  onState: (s, complete) => {
    root.dataset.stream = s;
    root.dataset.complete = String(complete);
    state.feed = s;
    state.feedComplete = complete;
    showFeed();
  },
});
setInfo(page.info, page.world, page.whole_at);
bind();
stream.start();
followWholeRun($("whole-run-card"), run, () => LIVE.has(state.verdict), () => !state.waiting);
