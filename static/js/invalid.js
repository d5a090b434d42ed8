// The 422 page of a link with a bad parameter (app/api/page_invalid.py): the language switch
// reopens the same link in the other language, so the same problems read in it.
import { switchLang } from "./i18n.js";

document.getElementById("lang-toggle").addEventListener("click", (ev) => switchLang(ev.currentTarget.dataset.to));
