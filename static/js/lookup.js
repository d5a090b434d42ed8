// Lookups into the core's timeline at a cursor time: which event a stage runs, how many
// activations it holds. Binary searches over data the core sent; no model arithmetic.

// Per stage, its events (compute and tail) sorted by start; stages never overlap themselves.
export function eventsByStage(model) {
  const pp = model.layout.sizes.pp;
  const out = Array.from({ length: pp }, () => []);
  // dp_hidden runs under the backward, not instead of it: the stage is still computing.
  const tail = (model.timeline.tail ?? []).filter((e) => e.kind !== "dp_hidden");
  for (const e of [...model.timeline.events, ...tail]) out[e.stage].push(e);
  for (const list of out) list.sort((a, b) => a.start - b.start);
  return out;
}

// The last index i with key(list[i]) <= t, or -1.
function lastAtOrBefore(list, t, key) {
  let lo = 0;
  let hi = list.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (key(list[mid]) <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

// The event running on a stage during the step that starts at t (start <= t < end).
export function eventAt(list, t) {
  const i = lastAtOrBefore(list, t, (e) => e.start);
  return i >= 0 && t < list[i].end ? list[i] : null;
}

// The core's step function [[t, held], ...] read at t.
export function heldAt(steps, t) {
  const i = lastAtOrBefore(steps, t, (s) => s[0]);
  return i >= 0 ? steps[i][1] : 0;
}

// The step index whose boundary is the last at or before t.
export function frameAt(times, t) {
  return Math.max(0, lastAtOrBefore(times, t + 1e-9 * Math.max(1, Math.abs(t)), (x) => x));
}

// Every rank of each pipeline stage: a stage runs on all its DP replicas and TP shards.
export function ranksByStage(layout) {
  const out = Array.from({ length: layout.sizes.pp }, () => []);
  for (const r of layout.ranks) out[r.pp].push(r.rank);
  return out;
}
