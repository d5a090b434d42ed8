// Flow page: the CP ring steps and the EP all-to-alls inside each F and B. Every count and
// duration is the core's (flow.comm, app/core/views/flow_comm.py); this only picks the groups
// of the busy stages from the layout and words the numbers.
import { el, num, seconds } from "./fmt.js";
import { fill, tr } from "./i18n.js";
import { GROUP } from "./palette.js";

const MAX_RINGS = 64; // past this many rings on the small grid, the arrows are a smear

// The CP rings and EP groups of the ranks of the stages running an F or B now.
export function commGroups(layout, comm, ranks) {
  if (!comm || !ranks.length) return null;
  const busy = new Set(ranks);
  const pick = (axis) => (comm[axis] ? (layout.groups[axis] ?? []).filter((g) => busy.has(g[0])) : []);
  const rings = pick("cp");
  const a2a = pick("ep").flat();
  return rings.length || a2a.length ? { rings: rings.slice(0, MAX_RINGS), a2a, ringCount: rings.length } : null;
}

// Where an animation of one frame stands: the ring step (1..cp-1) and dispatch or combine.
export function commPhase(comm, phase) {
  const steps = comm?.cp?.steps ?? 0;
  return {
    step: steps ? Math.min(steps, Math.floor(phase * steps) + 1) : 0,
    a2a: phase < 0.5 ? "dispatch" : "combine",
  };
}

function time(x, units) {
  return units === "abstract" ? `${num(x)} ${tr("formulas.teaching_units")}` : seconds(x);
}

// The readout under the GPU grid: the ring step and the all-to-all under way, with the
// per-layer numbers of the pass the busy stages run (F, or B when only backwards run).
export function commLines(comm, kind, at, units) {
  const out = [];
  if (comm?.cp) {
    const c = comm.cp;
    out.push(el("p", { class: "comm-cp", "data-step": at.step },
      fill("flow.cp_now", [at.step, c.steps, c.size, time(c.hop_s[kind], units),
        time(c.behind_s[kind], units), time(c.exposed_s[kind], units)])));
  }
  if (comm?.ep) {
    const e = comm.ep;
    out.push(el("p", { class: "comm-ep", "data-a2a": at.a2a },
      fill("flow.ep_now", [tr(`flow.ep_${at.a2a}`), e.size, time(e.each_s[kind], units),
        e.per_layer, time(e.exposed_s[kind], units)])));
  }
  return out;
}

// Legend entries for the two, only when the scenario has them (cp = ep = 1 reads as before).
export function renderCommLegend(box, comm) {
  box.querySelectorAll("[data-comm]").forEach((n) => n.remove());
  for (const [axis, key] of [["cp", "legend.cp_ring"], ["ep", "legend.ep_a2a"]]) {
    if (!comm?.[axis]) continue;
    const item = el("span", { class: "item", "data-comm": axis });
    item.append(el("i", { style: `background:${GROUP[axis]}` }), tr(key));
    box.append(item);
  }
}

// The exposed part of each F and B's ring and all-to-alls, as strips before the TP strip
// at the block's end (the core's per-chunk seconds; nothing where attention hides it all).
export function commTraces(events, comm, tpOf) {
  const chunks = comm?.chunks;
  if (!chunks) return [];
  // DualPipe(V)'s overlapped pairs hide their all-to-alls under the other chunk (the core's list).
  const hidden = new Set((comm.paired ?? []).map((k) => k.join(",")));
  const out = [];
  for (const [key, field, name] of [["ep", "a2a_exposed_s", "flow.ep_strip"], ["cp", "cp_exposed_s", "flow.cp_strip"]]) {
    const ev = [];
    const base = [];
    const dur = [];
    for (const e of events) {
      if (e.kind !== "F" && e.kind !== "B") continue;
      const c = chunks[e.stage]?.[e.chunk];
      const inPair = key === "ep" && hidden.has(`${e.stage},${e.kind},${e.microbatch},${e.chunk}`);
      const d = c && !inPair ? c[field][e.kind] : 0;
      if (!(d > 0)) continue;
      const tp = tpOf(e);
      const before = key === "cp" && !hidden.has(`${e.stage},${e.kind},${e.microbatch},${e.chunk}`)
        ? c.a2a_exposed_s[e.kind] : 0;
      const end = e.end - tp - before;
      ev.push(e);
      dur.push(Math.max(0, Math.min(d, end - e.start)));
      base.push(end - dur[dur.length - 1]);
    }
    if (!ev.length) continue;
    out.push({
      type: "bar", orientation: "h", name: tr(name), meta: `${key}_comm`, width: 0.22, offset: 0.18,
      base, x: dur, y: ev.map((e) => e.stage), marker: { color: GROUP[key] },
      hovertemplate: `${tr(name)}: %{x:.3g}<extra></extra>`,
    });
  }
  return out;
}
