// Activation memory over the step, one Plotly line per pipeline stage (the core's points),
// beside the peak stack the overview draws (memchart.js, from the cost model's memory).
import { memoryChart } from "./memchart.js";
import { CONFIG, whenPlotly } from "./plot.js";
import { KIND, categorical } from "./palette.js";
import { el, bytes } from "./fmt.js";
import { fill, tr } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const GIB = 1024 ** 3; // display unit only
const PARTS = [
  ["weights_bytes", "mem.weights", KIND.F],
  ["grads_bytes", "mem.grads", KIND.B],
  ["optimizer_bytes", "mem.optimizer", KIND.W],
  ["activations_bytes", "mem.activations", KIND.dp],
];

function stack(mem) {
  memoryChart($("memtime-stack"), mem, PARTS);
  $("memtime-keys").replaceChildren(...PARTS.map(([, label, colour]) => {
    const item = el("span", { class: "item" });
    item.append(el("i", { style: `background:${colour}` }), tr(label));
    return item;
  }));
}

function peaks(mt) {
  $("memtime-peaks").replaceChildren(...mt.stages.map((s) => el("li", { "data-stage": String(s.stage) },
    fill("primer.mem.peak", { s: s.stage, peak: bytes(s.peak_bytes), inflight: mt.peak_inflight[s.stage] }))));
}

async function chart(mt) {
  const box = $("memtime-chart");
  const traces = mt.stages.map((s) => ({
    x: s.t, y: s.bytes.map((b) => b / GIB), type: "scatter", mode: "lines",
    name: fill("primer.mem.stage", { s: s.stage }), line: { color: categorical(s.stage), width: 2 },
    hovertemplate: "%{y:.2f} GiB<extra>%{fullData.name}</extra>",
  }));
  const layout = {
    margin: { l: 50, r: 10, t: 34, b: 44 }, height: 300,
    xaxis: { title: { text: tr("primer.mem.time") }, nticks: 6 }, yaxis: { title: { text: "GiB" }, rangemode: "tozero" },
    legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
  };
  const Plotly = await whenPlotly();
  await Plotly.newPlot(box, traces, layout, CONFIG);
  box.dataset.lines = String(traces.length);
}

export function drawMemory(primer) {
  stack(primer.memory);
  peaks(primer.memory_timeline);
  return chart(primer.memory_timeline);
}
