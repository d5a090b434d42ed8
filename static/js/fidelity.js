// Accuracy board: the server renders every table and sorts by the URL's sort and order, so
// this binds the header only (language and copy link); the nav links stay as rendered.
import { switchLang, tr } from "./i18n.js";

const $ = (id) => document.getElementById(id);

$("lang-toggle").addEventListener("click", (ev) => switchLang(ev.currentTarget.dataset.to));
$("copy-link").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(location.href);
    $("copy-status").textContent = tr("copy.done");
  } catch {
    $("copy-status").textContent = location.href; // no clipboard: show the link to copy by hand
  }
});
document.body.dataset.ready = "fidelity";
