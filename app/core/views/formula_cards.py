"""The formula cards with the scenario's own numbers: each closed form written out, then
substituted, then its result; where the per-stage model differs from the closed form, the
terms that differ, each with its size (the bubble's are in formula_bubble). Tokens and their
units are described in formula_tokens.
"""

from __future__ import annotations

from typing import Any

from app.core.cost import comm, memory
from app.core.inputs.scenario import Scenario
from app.core.schedules import Action
from app.core.simulate import DurationsLike, Timeline
from app.core.views.formula_bubble import bubble_card
from app.core.views.formula_tokens import Token, cause, num
from app.core.views.prediction import Prediction


def world_card(s: Scenario) -> dict[str, Any]:
    # The article: GPU 总数 = DP × TP × PP (Narayanan et al. 2021 §3: n = p·t·d).
    chain = [["N = DP × TP × PP"], [num(s.dp), " × ", num(s.tp), " × ", num(s.pp)]]
    if s.cp > 1:  # Megatron-LM context_parallel.md: "The total GPU count is TP × CP × PP × DP"
        chain = [["N = DP × TP × PP × CP"], [*chain[1], " × ", num(s.cp)]]
    return {"id": "world", "chain": [*chain, [num(s.world_size)]]}


def batch_card(s: Scenario, seq_len: int) -> dict[str, Any]:
    # The article's gradient accumulation: B_eff = DP × B_micro × k, k = m micro-batches a step.
    b, m = s.micro_batch_size, s.microbatches
    seqs = s.dp * b * m
    return {
        "id": "batch",
        "chain": [
            ["B_eff = DP × b × k"],
            [num(s.dp), " × ", num(b), " × ", num(m)],
            [num(seqs)],
        ],
        "tokens": [[num(seqs), " × ", num(seq_len)], [num(seqs * seq_len)]],
    }


def _bpp_tokens(t, zero: int) -> tuple[str, list[Token]]:
    """(w + g + o) per parameter, each ZeRO-sharded part written over DP."""
    # Rajbhandari et al. 2020 §3/§5: 2 + 2 + 12 B mixed-precision Adam; ZeRO-k shards o, g, w.
    w, g, o = memory.state_bytes_per_param(t, 1)
    parts = [("w", w, 3), ("g", g, 2), ("o", o, 1)]
    sym = " + ".join(f"{n}/DP" if zero >= z else n for n, _, z in parts)
    tokens: list[Token] = []
    for i, (_, v, z) in enumerate(parts):
        tokens += ([" + "] if i else []) + [num(v, "B")] + (["/DP"] if zero >= z else [])
    return sym, tokens


def memory_card(s: Scenario, cost: Prediction) -> dict[str, Any]:
    """The article's M ≈ (M_W + M_G + M_O)/(TP·PP) + M_A/PP, beside the peak stage's own sum:
    each part the closed form leaves out is a cause (cost/memory.py's components)."""
    m, t = cost.model, cost.training
    per_stage = cost.sections["memory"]["per_stage"]
    P, dp, tp, pp, v = memory.total_params(m), s.dp, s.tp, s.pp, s.chunks
    # Rajbhandari et al. 2020 §3 per parameter; g counts the fp32 buffer where there is one
    # (Megatron-LM dist_optimizer.md: bf16 weights, fp32 grads: 2 + 4 + 12 = 18 B).
    bpp = sum(memory.state_bytes_per_param(t, dp))
    state = P * bpp / (tp * pp)
    A = memory.activation_bytes_per_layer(m, t, tp)  # cost/memory_activations.py per layer
    k = max(cost.timeline.peak_inflight)
    held_formula = m.layers * k / (pp * v)  # layer-micro-batches the even split keeps
    act = A * held_formula
    sym_bpp, bpp_tok = _bpp_tokens(t, s.zero)
    over = "(PP·v)" if v > 1 else "PP"
    over_tok: list[Token] = ["(", num(pp), "·", num(v), ")"] if v > 1 else [num(pp)]
    chain = [
        [f"M ≈ P·({sym_bpp})/(TP·PP) + A·L·k/{over}"],
        [num(P), "·(", *bpp_tok, ")/(", num(tp), "·", num(pp), ") + ", num(A, "B"), "·",
         num(m.layers), "·", num(k), "/", *over_tok],
        [num(state, "B"), " + ", num(act, "B")],
        [num(state + act, "B")],
    ]  # fmt: skip
    j = max(range(len(per_stage)), key=lambda i: per_stage[i]["total_bytes"])
    st = per_stage[j]
    held = st["activations_bytes"] / A if A > 0 else 0.0
    even = P / (tp * pp)
    causes = [
        cause("formulas.cause.ends", (st["params"] - even) * bpp, "B",
              num(j), num(st["params"]), num(even)),
        cause("formulas.cause.held", st["activations_bytes"] - act, "B",
              num(held), num(held_formula)),
        # memory_transients.logits_transient_bytes: (4 + e), 12 or (under TP) 16 B per logit.
        cause("formulas.cause.logits_fused" if t.fused_cross_entropy else "formulas.cause.logits",
              st["logits_transient_bytes"], "B", num(j)),
        cause("formulas.cause.recompute", st["recompute_transient_bytes"], "B"),
        cause("formulas.cause.gather", st["gather_bytes"], "B"),
        cause("formulas.cause.fragmentation", st["fragmentation_bytes"], "B",
              num(memory.FRAGMENTATION, "%")),
        cause("formulas.cause.floor", st["floor_bytes"], "B"),
    ]  # fmt: skip
    return {
        "id": "memory",
        "chain": chain,
        "closed": num(state + act, "B"),
        "simulated": num(st["total_bytes"], "B"),
        "stage": j,
        "causes": [c for c in causes if abs(c["delta"]["v"]) >= 1e-3 * st["total_bytes"]],
    }


def _tp_chain(s: Scenario, m, t, layers: list[list[int]]) -> list[list[Token]]:
    if s.tp == 1:
        return [["V_TP"], [num(0.0, "B")]]
    row = max(layers, key=sum)
    busiest, e = sum(row), t.element_bytes
    # Layer passes per layer: t.passes, or fewer where recompute_layers reruns only some.
    n = sum(k * t.chunk_passes(k) for k in row) / busiest if busiest else t.passes
    # Shoeybi et al. 2019 §3: 2 all-reduces per layer per pass, each 2(t-1)/t of s·b·h·e.
    v = 2 * comm.ring_factor(s.tp) * comm.tp_message_bytes(m, t) * busiest * s.microbatches
    return [
        ["V_TP = 2·2(t − 1)/t · s·b·h·e · L_r·m·n"],
        ["2·2·(", num(s.tp), " − 1)/", num(s.tp), " · ", num(m.seq_len), "·",
         num(s.micro_batch_size), "·", num(m.hidden), "·", num(e, "B"), " · ", num(busiest),
         "·", num(s.microbatches), "·", num(n)],
        [num(v * n, "B")],
    ]  # fmt: skip


def _pp_chain(s: Scenario, m, t) -> list[list[Token]]:
    if s.pp == 1:
        return [["V_PP"], [num(0.0, "B")]]
    c = 1 if t.forward_only else 2  # activations down, their gradients back up
    # Narayanan et al. 2021 §4.1: each boundary carries b·s·h per micro-batch, ÷t when split.
    msg = comm.activation_message_bytes(m, t, s.tp)
    sp = comm.pp_split(t, s.tp)  # the send is 1/t (SP or Megatron's scatter/gather)
    return [
        ["V_PP = c·m·v·s·b·h·e" + (" / TP" if sp else "")],
        [num(c), "·", num(s.microbatches), "·", num(s.chunks), "·", num(m.seq_len), "·",
         num(s.micro_batch_size), "·", num(m.hidden), "·", num(t.element_bytes, "B"),
         *([" / ", num(s.tp)] if sp else [])],
        [num(c * s.microbatches * s.chunks * msg, "B")],
    ]  # fmt: skip


def _dp_chain(s: Scenario, t, psi: int) -> list[list[Token]]:
    # e: the weights' element size; e_g: the gradients' on the wire (fp32 with grad_reduce_fp32).
    d, e, eg = s.dp, t.element_bytes, t.grad_bytes
    if d == 1 or t.forward_only:
        return [["V_DP"], [num(0.0, "B")]]
    if t.zero >= 3:  # Rajbhandari et al. 2020 §7: gathers twice per micro-batch + one RS
        g = comm.zero3_gathers(t)
        return [
            ["V_DP = (d − 1)/d · Ψ · (G·e + e_g)"],
            ["(", num(d), " − 1)/", num(d), " · ", num(psi), " · (", num(g), "·",
             num(e, "B"), " + ", num(eg, "B"), ")"],
            [num((d - 1) / d * psi * (g * e + eg), "B")],
        ]  # fmt: skip
    # NCCL PERFORMANCE.md: a ring all-reduce moves 2(d-1)/d of the gradients per rank.
    return [
        ["V_DP = 2(d − 1)/d · Ψ·e_g"],
        ["2·(", num(d), " − 1)/", num(d), " · ", num(psi), "·", num(eg, "B")],
        [num(comm.ring_factor(d) * psi * eg, "B")],
    ]


def comm_card(s: Scenario, cost: Prediction) -> dict[str, Any]:
    m, t = cost.model, cost.training
    psi = max(st["params"] for st in cost.sections["memory"]["per_stage"])
    axes = {
        "tp": _tp_chain(s, m, t, cost.pipeline.layers),
        "pp": _pp_chain(s, m, t),
        "dp": _dp_chain(s, t, psi),
    }
    return {"id": "comm", "axes": axes}


def step_card(s: Scenario, cost: Prediction) -> dict[str, Any]:
    sec, b = cost.sections, cost.sections["breakdown"]
    step_s, batch, seq = sec["step_time_s"], sec["compute"]["global_batch"], sec["model"]["seq_len"]
    flops, peak = sec["compute"]["model_flops_per_iteration"], sec["hardware"]["peak_tflops"] * 1e12
    return {
        "id": "step",
        "chain": [
            ["T = T_pipe + T_DP + T_opt"],
            [
                num(b["pipeline_s"], "s"),
                " + ",
                num(b["dp_s"], "s"),
                " + ",
                num(b["optimizer_s"], "s"),
            ],
            [num(step_s, "s")],
        ],  # fmt: skip
        "tokens": [
            ["Θ = B·s / T"],
            [num(batch), "·", num(seq), " / ", num(step_s, "s")],
            [num(sec["tokens_per_s"], "tok/s")],
        ],
        # Chowdhery et al. 2022 (PaLM) App. B: MFU = model FLOPs/s over peak FLOPs/s.
        "mfu": [
            ["MFU = F / (T·N·peak)"],
            [
                num(flops, "flop"),
                " / (",
                num(step_s, "s"),
                "·",
                num(s.world_size),
                "·",
                num(peak, "flop/s"),
                ")",
            ],
            [num(sec["mfu"], "%")],
        ],  # fmt: skip
    }


def cards(
    s: Scenario, cost: Prediction, shown: Timeline, actions: list[list[Action]],
    teaching: DurationsLike | None,
) -> dict[str, Any]:  # fmt: skip
    """Every formula card of the overview, keyed by card."""
    return {
        "world": world_card(s),
        "batch": batch_card(s, cost.sections["model"]["seq_len"]),
        "bubble": bubble_card(s, cost, shown, actions, teaching),
        "memory": memory_card(s, cost),
        "comm": comm_card(s, cost),
        "step": step_card(s, cost),
    }
