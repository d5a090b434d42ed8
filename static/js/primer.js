// The collectives primer (/primer): the server embeds the core's primer JSON; this module
// draws it and animates the ring. Stepping writes step= into the URL, so the link is the
// state; group and rank reload the page (the server computes the new ring).
import { bindPageHeader } from "./page_header.js";
import { setParams } from "./state.js";
import { tr } from "./i18n.js";
import { drawRing, ringFacts } from "./primer_ring.js";
import { drawZero } from "./primer_zero.js";
import { drawMemory } from "./primer_memory.js";
import { drawCpEp } from "./primer_cpep.js";

const data = JSON.parse(document.getElementById("page-data").textContent);
const $ = (id) => document.getElementById(id);
const PLAY_MS = 900; // one ring step per 0.9 s: slow enough to read the caption

function stepper(primer) {
  const last = primer.ring.steps.length - 1;
  let step = Math.min(primer.step, Math.max(last, 0));
  let timer = null;
  const show = (k, write = true) => {
    step = Math.max(0, Math.min(last, k));
    drawRing(primer, step);
    $("ring-step").value = String(step);
    $("ring-step-out").textContent = String(step);
    if (write) setParams({ step });
  };
  const stop = () => {
    clearInterval(timer);
    timer = null;
    $("ring-play").textContent = "▶";
    $("ring-play").setAttribute("aria-label", tr("primer.play"));
  };
  const play = () => {
    if (timer) return stop();
    if (step >= last) show(0);
    $("ring-play").textContent = "⏸";
    $("ring-play").setAttribute("aria-label", tr("primer.pause"));
    timer = setInterval(() => (step >= last ? stop() : show(step + 1)), PLAY_MS);
  };
  $("ring-first").addEventListener("click", () => (stop(), show(0)));
  $("ring-prev").addEventListener("click", () => (stop(), show(step - 1)));
  $("ring-next").addEventListener("click", () => (stop(), show(step + 1)));
  $("ring-play").addEventListener("click", play);
  $("ring-step").addEventListener("input", (ev) => (stop(), show(Number(ev.target.value))));
  document.addEventListener("keydown", (ev) => {
    if (ev.target.closest("input, select, textarea")) return;
    if (ev.key === "ArrowRight") (stop(), show(step + 1));
    else if (ev.key === "ArrowLeft") (stop(), show(step - 1));
  });
  const drawn = last > 0; // a one-GPU group has only its start; a large one is not drawn
  for (const id of ["ring-first", "ring-prev", "ring-play", "ring-next", "ring-step"]) $(id).disabled = !drawn;
  if (drawn) show(step, false);
}

function main() {
  bindPageHeader();
  const primer = data.primer;
  if (primer) {
    ringFacts(primer);
    stepper(primer);
    drawZero(primer);
    drawMemory(primer);
    drawCpEp(primer);
  }
  document.body.dataset.ready = "primer";
}

main();
