"""``--scenario URL``: an import's layout from a meshscope scenario link (issue 25 item 1).

A user who planned the run on the overview has its link (``/?dp=4&tp=2&pp=2&order=megatron
&schedule=gpipe&microbatches=8``); giving it to ``meshscope import-trace --scenario`` (or
``scenario=`` on the upload route) lays the imported ranks out as that page drew them,
instead of the flags one by one. The link is validated as the page validates it (the core's
Scenario), so a link the page would refuse is refused here, naming the field. The mesh, its
rank order, GPUs per node, the schedule and the micro-batches lay the ranks out; the rest
(the model, the hardware, the training settings) goes with the run as ``RunInfo.scenario``,
which the a-priori prediction prices instead of a nominal model (app/live/a_priori.py). The
page's view state (``lang``, a selected rank) is left aside.
"""

from __future__ import annotations

import argparse
from urllib.parse import parse_qsl, urlsplit

from pydantic import ValidationError

from app.core.inputs.hardware import HARDWARE
from app.core.inputs.protocol import RunInfo
from app.core.inputs.scenario import Scenario
from app.core.traces import TraceError

# The flags a link replaces: giving both would leave one of them unread.
LAYOUT_FLAGS = ("dp", "tp", "pp", "cp", "ep", "order", "gpus_per_node", "schedule",
                "microbatches")  # fmt: skip
MAX_LINK = 8192  # a browser's practical URL bound; a page's link is far shorter
DEFAULT_GPUS_PER_NODE = 8


def scenario_of(link: str) -> Scenario:
    """The scenario a link (a whole URL, or only its query) describes; TraceError naming the
    field and the reason when the page would refuse it, or when its expert TP differs from
    its TP (a run's info has no etp: Megatron's default, etp = tp, only)."""
    if len(link) > MAX_LINK:
        raise TraceError(f"scenario link: {len(link)} characters, over {MAX_LINK}")
    query = urlsplit(link).query if "?" in link else link.lstrip("?")
    fields = {k: v for k, v in parse_qsl(query) if k in Scenario.model_fields}
    try:
        s = Scenario.model_validate(fields)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "scenario"
        raise TraceError(f"scenario link: {where}: {first['msg']}") from err
    if s.etp is not None and s.etp != s.tp:
        raise TraceError(f"scenario link: etp={s.etp}: an imported run's expert TP is its tp")
    return s


def layout_of(link: str) -> dict:
    """The import flags a link sets (LAYOUT_FLAGS)."""
    s = scenario_of(link)
    preset = HARDWARE.get(s.hardware)  # a profile only a server loaded: the default
    gpus = s.gpus_per_node or (preset.gpus_per_node if preset else DEFAULT_GPUS_PER_NODE)
    return dict(dp=s.dp, tp=s.tp, pp=s.pp, cp=s.cp, ep=s.ep, order=s.order, gpus_per_node=gpus,
                schedule=s.schedule.value, microbatches=s.microbatches)  # fmt: skip


def linked(info: RunInfo, link: str | None) -> RunInfo:
    """``info`` carrying the link's scenario (its non-default fields, as the page's share
    link has them), whose model and hardware the run's a-priori prediction prices."""
    if not link:
        return info
    try:
        return RunInfo.model_validate({**info.model_dump(), "scenario": scenario_of(link).query()})
    except ValidationError as err:
        raise TraceError(f"scenario link: {err.errors()[0]['msg']}") from err


def described(info: RunInfo) -> str:
    """``dp=2 tp=2 pp=2 order tp-pp-dp``, with cp and ep where the run has them: an import's
    report of its layout."""
    more = "".join(f" {a}={getattr(info, a)}" for a in ("cp", "ep") if getattr(info, a) > 1)
    return f"dp={info.dp} tp={info.tp} pp={info.pp}{more} order {info.order}"


def gpus_per_node(args: argparse.Namespace) -> int:
    """The flag's value, or the default when neither the flag nor a link said (a caller of
    ``import_trace.prepare`` with ``parse``'s Namespace, not through ``resolved``)."""
    return getattr(args, "gpus_per_node", None) or DEFAULT_GPUS_PER_NODE


def resolved(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with a given link's layout in its flags (TraceError when flags are given
    beside it), and GPUs per node defaulted when neither says."""
    link = getattr(args, "scenario", None)
    if not link:
        return argparse.Namespace(**{**vars(args), "gpus_per_node": gpus_per_node(args)})
    both = [f for f in LAYOUT_FLAGS if getattr(args, f, None) is not None]
    if both:
        raise TraceError(f"scenario link and {', '.join(both)} both given: give the layout one "
                         "way, not both")  # fmt: skip
    return argparse.Namespace(**{**vars(args), **layout_of(link)})
