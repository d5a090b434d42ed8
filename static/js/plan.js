// Planner page: the server renders the table; the form is a plain GET form in the URL.
import { bindHeader } from "./controls.js";
import { fillCopyAsSlots } from "./copy_as.js";

bindHeader();
fillCopyAsSlots(); // each row's "Copy as" menu
const form = document.getElementById("plan-form");
// A preset picked is a new plan at once; numbers wait for Enter or the button.
form.addEventListener("change", (ev) => ev.target.tagName === "SELECT" && form.requestSubmit());
document.body.dataset.ready = "plan";
