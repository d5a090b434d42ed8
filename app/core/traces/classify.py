"""Which span kind a trace event's name says it is. Names come from three places:
record_function ranges a training loop sets (the probe's own F3/B3/W3, Megatron's and
torchtitan's forward/backward ranges), torch's own annotations (ProfilerStep#N,
Optimizer.step#SGD.step, enumerate(DataLoader)#...), and c10d's collectives (record_param_comms
and the kernels and annotations it tags with ``Collective name``)."""

from __future__ import annotations

import re

STEP = re.compile(r"^ProfilerStep#(\d+)$")
# The probe's action names (schedules' compact strings): F3, B3, W3, with the chunk when v > 1
# as F3.1 (app/core/schedules: ``compact``); an optional space or underscore is accepted.
ACTION = re.compile(r"^([FBW])[ _]?(\d+)(?:[._ ](\d+))?$")
# c10d's collective names (torch/csrc/distributed/c10d/ParamCommsUtils.hpp and the
# ProcessGroup backends' ``Collective name`` arg), and the gloo:/nccl: annotations' suffixes.
P2P_SEND = frozenset({"send", "isend"})
P2P_RECV = frozenset({"recv", "recv_", "irecv", "recvanysource", "recv_anysource"})
NOT_A_TRANSFER = frozenset({"wait", "init", "barrier_wait", "coalesced", ""})
# A range that names the process group of the collectives inside it, as the probe writes
# around each gloo collective (gloo's annotations carry no group): "tp all_reduce ranks=[2, 3]".
GROUP_RANGE = re.compile(r"ranks=\[([\d, ]+)\]")


# The axes a group's own name may state: the probe's range ("tp all_reduce ranks=[0, 1]") and
# torch's DeviceMesh process groups (pg_desc "mesh_tp": torch/distributed/device_mesh.py).
NAMED_AXES = frozenset({"tp", "cp", "dp", "pp", "ep"})


def range_group(name: str) -> tuple[int, ...] | None:
    """The group a ``... ranks=[a, b]`` range names, else None."""
    m = GROUP_RANGE.search(name)
    return group_ranks(f"[{m[1]}]") if m else None


def named_axis(name: object) -> str | None:
    """tp, cp, dp, pp or ep where a group's name states it ("tp all_reduce ranks=[0, 1]",
    "mesh_tp"), else None: one family of groups alone cannot tell TP from DP by spacing."""
    if not isinstance(name, str) or not name.strip():
        return None
    word = name.split()[0].lower().removeprefix("mesh_")
    return word if word in NAMED_AXES else None


def action(name: str) -> tuple[str, int, int | None] | None:
    """(kind, microbatch, chunk) of an action-named range, else None."""
    m = ACTION.match(name)
    if not m:
        return None
    return m[1], int(m[2]), (int(m[3]) if m[3] is not None else None)


def phase(name: str) -> str | None:
    """F, B, optim or data for a range named after a training phase, else None."""
    low = name.lower().strip("# ")  # Megatron/HTA-style "## data_load ##" markers
    if low.startswith(("optimizer.step", "optimizer.zero_grad")) or low in ("optimizer", "optim"):
        return "optim"
    if "dataloader" in low or low.startswith(("data_load", "data load", "dataload")):
        return "data"
    if "backward" in low and not low.startswith("autograd::"):
        return "B"
    if "forward" in low:
        return "F"
    return None


def comm_kind(op: str) -> str | None:
    """send, recv or coll for a collective's name, None for a name that moves no data."""
    low = op.lower().lstrip("_")
    if low in NOT_A_TRANSFER:
        return None
    if low in P2P_SEND:
        return "send"
    if low in P2P_RECV:
        return "recv"
    return "coll"


def annotation_op(name: str) -> str | None:
    """``all_reduce`` of a ``gloo:all_reduce`` / ``nccl:all_reduce`` annotation, else None."""
    for prefix in ("gloo:", "nccl:"):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return None


def group_ranks(value: object) -> tuple[int, ...] | None:
    """``Process Group Ranks`` as written: a list, or the string ``'[0, 1]'``."""
    if isinstance(value, list):
        items = value
    elif isinstance(value, str):
        items = [p for p in value.strip("[] ").split(",") if p.strip()]
    else:
        return None
    try:
        ranks = tuple(sorted(int(p) for p in items))
    except (TypeError, ValueError):
        return None
    return ranks or None


def dtype_of(value: object) -> str | None:
    """bf16 or fp32 from a collective's ``dtype`` arg (c10d writes the ScalarType's name)."""
    if not isinstance(value, str):
        return None
    return "bf16" if value.lower() in ("bfloat16", "half", "float16") else "fp32"
