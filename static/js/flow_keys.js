// The flow player's keys: ← / → one frame, Space plays or pauses. Keys typed into a form
// control stay with it (the cursor's own arrows, a rank being typed), and Space on a focused
// button or link is that element's own click.

const TYPING = "input, select, textarea, [contenteditable]";
const CLICKABLE = "button, a[href], summary";

function inside(target, selector) {
  return target instanceof Element && target.closest(selector) !== null;
}

export function bindFlowKeys({ step, toggle }) {
  document.addEventListener("keydown", (ev) => {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey || inside(ev.target, TYPING)) return;
    if (ev.key === "ArrowLeft" || ev.key === "ArrowRight") {
      ev.preventDefault();
      step(ev.key === "ArrowLeft" ? -1 : 1);
    } else if (ev.key === " " && !inside(ev.target, CLICKABLE)) {
      ev.preventDefault(); // not a page scroll
      toggle();
    }
  });
}
