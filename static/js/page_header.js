// The header of a page without scenario controls (accuracy board, self-test, live run): the
// language switch reloads in the other language; Copy link copies this URL, or shows it to
// copy by hand where the clipboard is refused.
import { switchLang, tr } from "./i18n.js";

export function bindPageHeader(doneKey = "copy.done") {
  const status = document.getElementById("copy-status");
  document.getElementById("lang-toggle").addEventListener("click", (ev) => switchLang(ev.currentTarget.dataset.to));
  document.getElementById("copy-link").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(location.href);
      status.textContent = tr(doneKey);
    } catch {
      status.textContent = location.href;
    }
  });
}
