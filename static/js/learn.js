// The guided path (/learn): the server renders the step (analogy, question, links) and
// embeds the widget data the core computed; this module draws the widget, answers the
// question in place, and moves between steps with ← and →. The URL is the progress.
import { bindPageHeader } from "./page_header.js";
import { drawBars } from "./learn_bars.js";
import { drawGrid, drawTimeline } from "./learn_views.js";
import { markAnswer } from "./answer.js";

const $ = (id) => document.getElementById(id);
const data = JSON.parse($("page-data").textContent);

// ← and → follow the pager's links, unless a field or a modifier wants the key.
function bindKeys() {
  document.addEventListener("keydown", (ev) => {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    if (ev.target.closest?.("input, select, textarea, [contenteditable]")) return;
    const link = $({ ArrowLeft: "learn-prev", ArrowRight: "learn-next" }[ev.key] ?? "");
    if (!link) return;
    ev.preventDefault();
    location.assign(link.href);
  });
}

// The question answers in place; its links still open the self-test in a new tab.
function bindQuestion() {
  const card = document.querySelector("[data-question]");
  const reveal = (letter) => markAnswer(card, letter);
  card.addEventListener("click", (ev) => {
    const choice = ev.target.closest(".choice");
    if (!choice || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    reveal(choice.dataset.choice);
  });
  card.addEventListener("keydown", (ev) => {
    if (ev.key === " " && ev.target.classList.contains("choice")) {
      ev.preventDefault();
      ev.target.click();
    }
  });
}

async function drawWidget(w) {
  const keys = $("learn-keys");
  if (w.kind === "grid") return drawGrid(w);
  if (w.kind === "timeline") return drawTimeline(w, keys);
  return drawBars($("learn-bars"), keys, w);
}

async function main() {
  bindPageHeader();
  bindKeys();
  bindQuestion();
  $("learn-caption").textContent = await drawWidget(data.learn.widget);
  document.body.dataset.ready = "learn";
}

main();
