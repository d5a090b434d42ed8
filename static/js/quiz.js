// The self-test: the server renders every question, answered or not, from the URL. A click
// answers in place, writes the answers into the URL (the share link) and keeps every other
// choice's link current, so opening one in a new tab carries the same progress.
import { bindPageHeader } from "./page_header.js";
import { markAnswer } from "./answer.js";

const $ = (id) => document.getElementById(id);
const questions = [...document.querySelectorAll("[data-question]")];

function picks() {
  const raw = new URLSearchParams(location.search).get("answers") ?? "";
  const out = new Map();
  for (const item of raw.split(",").filter(Boolean)) out.set(Number(item.slice(0, -1)), item.slice(-1));
  return out;
}

// The same spelling as app/core/quiz.py:href: lang, only, answers by question number.
function hrefOf(answers) {
  const now = new URLSearchParams(location.search);
  const ids = [...answers.keys()].sort((a, b) => a - b);
  const parts = [];
  for (const key of ["lang", "only"]) if (now.get(key)) parts.push(`${key}=${encodeURIComponent(now.get(key)).replace(/%2C/g, ",")}`);
  if (ids.length) parts.push(`answers=${ids.map((id) => `${id}${answers.get(id)}`).join(",")}`);
  return `/quiz${parts.length ? "?" + parts.join("&") : ""}`;
}

function show(card, letter) {
  card.dataset.picked = letter;
  const right = markAnswer(card, letter);
  const toc = document.querySelector(`[data-toc="${card.dataset.question}"]`);
  if (toc) toc.className = right ? "right" : "wrong";
}

function refresh(answers) {
  const done = questions.filter((q) => q.dataset.picked);
  const right = done.filter((q) => q.dataset.picked === q.dataset.answer).length;
  const out = $("quiz-progress");
  const vars = { answered: done.length, total: questions.length, correct: right };
  out.textContent = out.dataset.template.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? vars[k] : m));
  for (const card of questions) {
    for (const c of card.querySelectorAll(".choice")) {
      const next = new Map(answers).set(Number(card.dataset.question), c.dataset.choice);
      c.href = `${hrefOf(next)}#q${card.dataset.question}`;
    }
  }
}

for (const card of questions) {
  card.addEventListener("click", (ev) => {
    const choice = ev.target.closest(".choice");
    if (!choice || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    const answers = picks().set(Number(card.dataset.question), choice.dataset.choice);
    history.replaceState(null, "", `${hrefOf(answers)}#q${card.dataset.question}`);
    show(card, choice.dataset.choice);
    refresh(answers);
  });
  // role="button": Space presses it too (Enter already follows the link).
  card.addEventListener("keydown", (ev) => {
    if (ev.key === " " && ev.target.classList.contains("choice")) {
      ev.preventDefault();
      ev.target.click();
    }
  });
}

bindPageHeader();
document.body.dataset.ready = "quiz";
