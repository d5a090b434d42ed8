// Accuracy board: the server renders every table and sorts by the URL's sort and order, so
// this binds the header only (language and copy link); the nav links stay as rendered.
import { bindPageHeader } from "./page_header.js";

bindPageHeader();
document.body.dataset.ready = "fidelity";
