// /runs/{run} for a run the server does not know (a 404 page). The link may have been shared
// just before its probe starts, so the page asks for the run every few seconds and reloads
// into the live page once a probe has announced it.
import { switchLang } from "./i18n.js";

const page = JSON.parse(document.getElementById("page-data").textContent);

async function poll() {
  if (document.hidden) return; // a background tab waits; it checks again when shown
  try {
    const res = await fetch(`/api/runs/${encodeURIComponent(page.run)}`, { cache: "no-store" });
    if (res.ok) location.reload(); // the same URL now answers with the live page
  } catch (err) {
    // the server is restarting or unreachable: the next tick tries again
  }
}

setInterval(poll, page.poll_s * 1000);
document.addEventListener("visibilitychange", poll);
document.getElementById("lang-toggle").addEventListener("click", (ev) => switchLang(ev.currentTarget.dataset.to));
