// Flow page: the animated timeline, the mini rank grid lit by the cursor, and the player.
import { bandNode } from "./band.js";
import { bindForm, bindHeader, showErrors } from "./controls.js";
import { fillCopyAsSlots } from "./copy_as.js";
import { commGroups, commLines, commPhase, renderCommLegend } from "./flow_comm.js";
import { bindFlowKeys } from "./flow_keys.js";
import { captionText, renderChunks, renderKinds } from "./flow_legend.js";
import { el, num, pct, seconds } from "./fmt.js";
import { RankGrid } from "./grid.js";
import { showTip } from "./grid_input.js";
import { eventAt, eventsByStage, frameAt, heldAt, ranksByStage } from "./lookup.js";
import { KIND } from "./palette.js";
import { tipHtml } from "./rankinfo.js";
import { renderStageBalance } from "./stage_balance.js";
import { stepPeriodLines } from "./step_period.js";
import { initial, refetch, setParams, tr } from "./state.js";
import { Timeline, tpTime } from "./timeline.js";

const $ = (id) => document.getElementById(id);
const start = initial();
const ui = { cursor: $("cursor"), play: $("play"), speed: $("speed"), rank: $("rank-input") };
const s = { model: null, extra: null, k: 0, playing: null, byStage: [], stageRanks: [], seq: 0 };

const mini = new RankGrid($("mini-grid"), {
  maxCellPx: 30, maxHeightPx: 300, groupsOnSelect: false, ringColor: "#111",
  nodeLabel: tr("node"),
  onHover: (h, ev) => showTip($("grid-tip"), $("mini-wrap"), tipHtml(mini, h), ev),
  onClick: (h) => h && h.rank !== null && selectRank(h.rank === mini.selected ? null : h.rank),
});
const timeline = new Timeline($("timeline"), $("timeline-overlay"), {
  onHoverStage: (stage) => {
    mini.ring = stage === null ? null : s.stageRanks[stage];
    mini.draw();
  },
});

function times() {
  return s.extra.frames.times;
}

// Light the GPUs at the cursor: compute ranks in their kind's colour, the tail in its own.
function lightGrid(t) {
  const active = new Map();
  const computing = [];
  const tail = [];
  const pulse = [];
  const passing = []; // ranks in an F or B: their CP rings and EP groups communicate
  const kinds = new Set();
  const tp = s.model.layout.sizes.tp;
  s.byStage.forEach((list, stage) => {
    const e = eventAt(list, t);
    if (!e) return;
    const compute = e.kind === "F" || e.kind === "B" || e.kind === "W";
    for (const r of s.stageRanks[stage]) {
      active.set(r, KIND[e.kind] ?? KIND.F);
      (compute ? computing : tail).push(r);
    }
    // Megatron's TP all-reduces every F and B; the core's tp_time, when sent, says how long.
    const hasTp = s.model.timeline.tp_time ? tpTime(s.model.timeline, stage, e.kind) > 0 : tp > 1;
    if ((e.kind === "F" || e.kind === "B") && hasTp) pulse.push(...s.stageRanks[stage]);
    if (e.kind === "F" || e.kind === "B") {
      passing.push(...s.stageRanks[stage]);
      kinds.add(e.kind);
    }
  });
  mini.active = active;
  const d = mini.canvas.dataset;
  d.active = computing.sort((a, b) => a - b).join(",");
  d.tail = tail.sort((a, b) => a - b).join(",");
  d.pulse = pulse.sort((a, b) => a - b).join(",");
  const groups = commGroups(s.model.layout, s.extra.comm, passing);
  mini.comm = groups;
  d.cpRings = groups ? groups.rings.map((g) => g.join(",")).join(";") : "";
  d.a2a = groups ? [...groups.a2a].sort((a, b) => a - b).join(",") : "";
  s.commKind = kinds.has("F") ? "F" : "B";
  runPulse(pulse);
}

// The ring step and the all-to-all under way at this point of the frame's animation.
function commNow(phase) {
  const box = $("comm-now");
  const comm = s.extra.comm;
  box.hidden = !comm;
  if (!comm) return;
  const at = commPhase(comm, Math.min(phase, 0.999));
  const busy = Boolean(mini.comm);
  box.classList.toggle("idle", !busy);
  box.replaceChildren(...commLines(comm, s.commKind, at, s.model.timeline.units));
  Object.assign(box.dataset, { step: busy ? at.step : 0, a2a: busy ? at.a2a : "" });
}

// A short fading ring on the TP groups that all-reduce in this step.
function runPulse(ranks) {
  const began = performance.now();
  const mine = (s.pulseSeq = (s.pulseSeq ?? 0) + 1); // a newer frame's pulse takes over
  const frame = (now) => {
    if (mine !== s.pulseSeq) return;
    const phase = (now - began) / 600;
    mini.pulse = phase < 1 && ranks.length ? { ranks, phase } : null;
    mini.draw();
    commNow(phase);
    if (mini.pulse || (phase < 1 && mini.comm)) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  mini.pulse = ranks.length ? { ranks, phase: 0 } : null;
  mini.draw();
  commNow(0);
}

function inflight(t) {
  const box = $("inflight");
  box.replaceChildren();
  const steps = s.extra.inflight;
  const peak = Math.max(1, ...s.model.timeline.peak_inflight);
  const shown = Math.min(steps.length, 32);
  const values = [];
  for (let stage = 0; stage < steps.length; stage += 1) values.push(heldAt(steps[stage], t));
  for (let stage = 0; stage < shown; stage += 1) {
    const row = el("div", { class: "bar", "data-stage": stage });
    row.append(el("span", { class: "name" }, `${tr("stage")} ${stage}`));
    row.append(el("span", { class: "fill", style: `width:${(110 * values[stage]) / peak}px` }));
    row.append(el("b", {}, String(values[stage])));
    box.append(row);
  }
  if (steps.length > shown) box.append(el("div", { class: "muted" }, `… ${steps.length}`));
  box.dataset.values = values.join(",");
}

function show(k, { updateUrl = true } = {}) {
  const ts = times();
  s.k = Math.max(0, Math.min(ts.length - 1, k));
  const t = ts[s.k];
  ui.cursor.value = String(s.k);
  $("step-no").textContent = String(s.k);
  $("time-now").textContent = num(t, 4);
  $("bubble-now").textContent = pct(s.extra.frames.bubble_so_far[s.k]);
  document.body.dataset.t = String(t);
  lightGrid(t);
  inflight(t);
  timeline.setCursor(t);
  caption(t);
  if (updateUrl) setParams({ t: s.k === 0 ? "" : t });
}

// The core's sentence for this frame, under the animation and as the chart's accessible name.
function caption(t) {
  const text = captionText(s.extra.captions, s.k, t);
  $("flow-caption").textContent = text;
  $("timeline-overlay").setAttribute("aria-label", text);
}

// Playing is part of the URL's state; while it plays the caption is not read out each step.
function playing(on) {
  ui.play.textContent = on ? ui.play.dataset.pause : ui.play.dataset.play;
  document.body.dataset.playing = on ? "1" : "0";
  $("flow-caption").setAttribute("aria-live", on ? "off" : "polite");
  setParams({ playing: on ? "1" : "" });
}

function stop() {
  clearTimeout(s.playing);
  s.playing = null;
  playing(false);
}

function tick() {
  if (s.k >= times().length - 1) return stop();
  show(s.k + 1);
  s.playing = setTimeout(tick, 1000 / Number(ui.speed.value));
}

function play() {
  if (s.playing) return stop();
  if (s.k >= times().length - 1) show(0);
  playing(true);
  s.playing = setTimeout(tick, 1000 / Number(ui.speed.value));
}

function selectRank(rank) {
  mini.selected = rank;
  ui.rank.value = rank ?? "";
  setParams({ rank: rank ?? "" });
  showErrors({});
  filterTimeline();
}

function filterTimeline() {
  const rank = mini.selected;
  const stage = rank === null ? null : s.model.layout.ranks[rank].pp;
  $("filter-note").hidden = rank === null;
  $("filter-rank").textContent = rank === null ? "" : `${rank} (${tr("stage")} ${stage})`;
  return timeline.setData(s.model, s.extra, stage).then(() => {
    renderChunks(s.extra.chunks, $("timeline"));
    renderCommLegend($("flow-legend"), s.extra.comm);
    for (const axis of ["cp", "ep"]) $(`legend-comm-${axis}`).hidden = !s.extra.comm?.[axis];
    show(s.k, { updateUrl: false });
  });
}

// The predicted step time, with the model's error band on published runs like it.
function stepTime(model) {
  const box = $("flow-step");
  box.hidden = model.step_time_s === undefined;
  $("flow-step-time").textContent = seconds(model.step_time_s);
  const band = bandNode(model.error_band);
  $("flow-band").replaceChildren(...(band ? [band] : []));
  // The animation is one step; ZB-H2's figure is the steady state of back-to-back steps.
  $("flow-step-period").replaceChildren(...stepPeriodLines(model.timeline.step_period));
}

// Layers and predicted F+B time per stage, beside the slowest (the core's stage_balance).
function stageBalance(model) {
  renderStageBalance(document.querySelector("#card-balance .body"), model);
}

async function draw(next, t, autoplay = false) {
  showErrors(next.errors);
  document.body.dataset.state = next.model ? "ok" : "error";
  if (!next.model) return;
  stop();
  Object.assign(s, { model: next.model, extra: next.extra });
  s.byStage = eventsByStage(s.model);
  s.stageRanks = ranksByStage(s.model.layout);
  stepTime(s.model);
  stageBalance(s.model);
  if (mini.selected !== null && mini.selected >= s.model.layout.world_size) mini.selected = null;
  mini.setLayout(s.model.layout);
  ui.cursor.max = String(times().length - 1);
  $("step-count").textContent = String(times().length - 1);
  s.k = frameAt(times(), t);
  show(s.k, { updateUrl: false });
  await filterTimeline();
  if (autoplay) play();
  document.body.dataset.ready = "flow";
}

async function update() {
  const mine = ++s.seq;
  const next = await refetch("/api/flow");
  if (mine === s.seq) await draw(next, 0);
}

ui.play.addEventListener("click", play);
const step = (delta) => s.model && (stop(), show(s.k + delta));
$("step-back").addEventListener("click", () => step(-1));
$("step-forward").addEventListener("click", () => step(1));
bindFlowKeys({ step, toggle: () => s.model && play() });
ui.cursor.addEventListener("input", () => (stop(), show(Number(ui.cursor.value))));
ui.speed.addEventListener("change", () => setParams({ speed: ui.speed.value }));
ui.rank.addEventListener("change", () => {
  const text = ui.rank.value.trim();
  const rank = Number(text);
  if (text === "") return selectRank(null);
  if (!Number.isInteger(rank) || rank < 0 || rank >= s.model.layout.world_size) {
    return showErrors({ rank: `0 ≤ rank < ${s.model.layout.world_size}` });
  }
  selectRank(rank);
});
$("show-all").addEventListener("click", (ev) => (ev.preventDefault(), selectRank(null)));
$("export-png").addEventListener("click", async () => {
  const a = el("a", { href: await timeline.png(), download: "meshscope-timeline.png" });
  document.body.append(a);
  a.click();
  a.remove();
});

mini.selected = start.state.rank;
renderKinds($("flow-legend"));
bindHeader();
fillCopyAsSlots(); // "Copy as" this scenario: read from the URL at each press
bindForm(update);
// A view model over the server's embed bound is not in the page (app/api/limits.py): fetch it.
const autoplay = start.state.playing;
if (start.extra?.deferred) refetch("/api/flow").then((next) => draw(next, start.state.t, autoplay));
else draw(start, start.state.t, autoplay);
