// One quiz question answered with ``letter``: the card and its choices marked right or
// wrong, the explanation shown. Shared by the self-test and the guided path.
export function markAnswer(card, letter) {
  const right = letter === card.dataset.answer;
  card.classList.add("answered");
  card.classList.toggle("right", right);
  card.classList.toggle("wrong", !right);
  for (const c of card.querySelectorAll(".choice")) {
    c.classList.toggle("picked", c.dataset.choice === letter);
    c.classList.toggle("correct", c.dataset.choice === card.dataset.answer);
    c.setAttribute("aria-pressed", String(c.dataset.choice === letter));
  }
  card.querySelector(".answer").hidden = false;
  return right;
}
