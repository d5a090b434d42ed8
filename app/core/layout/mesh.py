"""Rank orders with context (cp) and expert (ep) parallelism, as Megatron-LM folds them.

Megatron-LM (megatron/core/parallel_state.py, ``initialize_model_parallel``, default order
``tp-cp-ep-dp-pp``) builds two rank grids over the same world from one order string:

- the dense grid, ``RankGenerator(tp, ep=1, dp, pp, cp)``: world = tp x cp x dp x pp;
- the expert grid, ``RankGenerator(expert_tp, ep, expert_dp, pp, cp=1)`` with
  ``expert_dp = world // (expert_tp * ep * pp)``: ep is not a factor of its own, the expert
  groups re-partition the dense tp x cp x dp ranks (MoE parallel folding, Liu et al. 2025,
  arXiv 2504.14960). expert_tp (``etp``, --expert-tensor-parallel-size) defaults to tp;
  Megatron's one rule on it is that etp x ep divides tp x cp x dp (its RuntimeError:
  world_size not divisible by expert_tensor_model_pipeline_parallel size), so with etp < tp
  an EP group may span dense TP ranks, and expert_dp = tp x cp x dp / (etp x ep).

Megatron asserts the two grids share their pipeline groups, and that expert_dp = dp when pp
is not the slowest axis. An order without cp places it right after tp; one without ep
places it right after cp (where ``tp-cp-ep-dp-pp`` has them), so the article's 3-axis
orders keep their meaning at cp = ep = 1.
"""

from __future__ import annotations

from math import prod

AXES3: tuple[str, ...] = ("tp", "pp", "dp")
ORDER_AXES: tuple[str, ...] = ("tp", "cp", "ep", "dp", "pp")
# Axes of the expert grid, named apart from the dense ones where their groups differ.
EXPERT_NAMES = {"tp": "etp", "ep": "ep", "dp": "edp", "pp": "pp"}


def full_order(order: tuple[str, ...]) -> tuple[str, ...]:
    """The 5-axis order: cp right after tp and ep right after cp when not named."""
    out = list(order)
    if "cp" not in out:
        out.insert(out.index("tp") + 1, "cp")
    if "ep" not in out:
        out.insert(out.index("cp") + 1, "ep")
    return tuple(out)


def dense_order(order: tuple[str, ...]) -> tuple[str, ...]:
    """The dense grid's axes, fastest first (Megatron's decoder RankGenerator, ep = 1)."""
    return tuple(a for a in full_order(order) if a != "ep")


def expert_order(order: tuple[str, ...]) -> tuple[str, ...]:
    """The expert grid's axes (etp, ep, edp, pp), fastest first (Megatron: cp = 1 there)."""
    return tuple(EXPERT_NAMES[a] for a in full_order(order) if a != "cp")


def valid_axes(order: tuple[str, ...]) -> bool:
    """dp, pp and tp once each, cp and ep at most once each, nothing else."""
    return len(set(order)) == len(order) and set(AXES3) <= set(order) <= set(ORDER_AXES)


def strides(axes: tuple[str, ...], sizes: dict[str, int]) -> dict[str, int]:
    """Mixed-radix place values: rank distance between neighbours along each axis."""
    out, step = {}, 1
    for axis in axes:
        out[axis] = step
        step *= sizes[axis]
    return out


def expert_tp(sizes: dict[str, int]) -> int:
    """etp, tp when not given (Megatron-LM arguments.py: expert_tensor_parallel_size = tp)."""
    return sizes.get("etp") or sizes["tp"]


def fold_problem(order: tuple[str, ...], sizes: dict[str, int]) -> str | None:
    """Why Megatron would refuse this ep and etp (``divides`` or ``pipeline``), or None."""
    ep, etp = sizes["ep"], expert_tp(sizes)
    if (sizes["tp"] * sizes["cp"] * sizes["dp"]) % (etp * ep):
        return "divides"  # parallel_state.py: world % (expert_tp * ep * pp) != 0
    if ep == 1 and etp == sizes["tp"]:
        return None
    dense, expert = dense_order(order), expert_order(order)
    esizes = expert_sizes(sizes)
    pp_dense = prod(sizes[a] for a in dense[: dense.index("pp")])
    pp_expert = prod(esizes[a] for a in expert[: expert.index("pp")])
    pp_last = dense[-1] == "pp"
    # parallel_state.py asserts both: the same "pp" groups in both grids, and
    # "order.endswith('pp') or pp == 1 or expert_data_parallel_size == data_parallel_size".
    same_dp = esizes["edp"] == sizes["dp"]
    if sizes["pp"] > 1 and (pp_dense != pp_expert or (not pp_last and not same_dp)):
        return "pipeline"
    return None


def expert_sizes(sizes: dict[str, int]) -> dict[str, int]:
    """Sizes of the expert grid: expert_dp = tp x cp x dp / (etp x ep) (parallel_state.py
    initialize_model_parallel: world // (expert_tp * ep * pp))."""
    etp = expert_tp(sizes)
    return {
        "etp": etp,
        "ep": sizes["ep"],
        "edp": sizes["tp"] * sizes["cp"] * sizes["dp"] // (etp * sizes["ep"]),
        "pp": sizes["pp"],
    }
