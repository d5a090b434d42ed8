// Colours: categorical values, schedule kinds and the three group highlights.
const BASE = [
  "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2",
  "#eeca3b", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac",
];

// Ten distinct colours, then golden-angle hues so any count of values stays distinguishable.
export function categorical(i) {
  if (i < BASE.length) return BASE[i];
  return `hsl(${(i * 137.508) % 360}, 55%, ${i % 2 ? 48 : 62}%)`;
}

export const KIND = {
  F: "#4c78a8",
  B: "#54a24b",
  W: "#b279a2",
  dp: "#f58518",
  optim: "#e45756",
  idle: "#e9e9e9",
  tp: "#222222",
};

export const GROUP = {
  tp: "#e6550d", pp: "#3182bd", dp: "#31a354", self: "#111111",
  cp: "#9e4fb8", ep: "#c51b8a", // the CP ring and the EP group (drawn only when cp, ep > 1)
  etp: "#b07d00", edp: "#0f8b8d", // expert-TP and expert-DP groups (only when etp != tp)
};
export const CROSS = "#d62728";
export const DIM = "#d9d9d9";

// Every component cost/memory.py sends, bottom up; they sum to each stage's total_bytes.
// (the overview's memory card and the comparison's memory chart draw the same list)
export const MEMORY_PARTS = [
  ["weights_bytes", "mem.weights", KIND.F],
  ["grads_bytes", "mem.grads", KIND.B],
  ["grad_accum_bytes", "mem.grad_accum", categorical(4)],
  ["root_grads_bytes", "mem.root_grads", categorical(6)],
  ["optimizer_bytes", "mem.optimizer", KIND.W],
  ["activations_bytes", "mem.activations", KIND.dp],
  ["gather_bytes", "mem.gather", categorical(7)],
  ["logits_transient_bytes", "mem.logits", KIND.optim],
  ["recompute_transient_bytes", "mem.recompute", categorical(5)],
  ["fragmentation_bytes", "mem.fragmentation", categorical(9)],
  ["floor_bytes", "mem.floor", categorical(8)],
];
