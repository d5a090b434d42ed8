"""The guided path (/learn): the article's own order as data, one step per section.

The source article (大模型3D并行：DP+TP+PP层叠策略全解) walks from "why one GPU is not enough"
through DP, TP, PP and their 3D stack to tuning; ZeRO (Rajbhandari et al. 2020) sits after DP
and sequence parallelism (Korthikanti et al. 2022) with TP, as in the Ultra-Scale Playbook.
Each step names the scenarios its widget draws (queries the app already serves), the quiz
question that tests it (app/core/teach/quiz.py) and the full views that open at its
configuration. Texts live in the catalogues under ``learn.<step>.*``; this module holds no
language, and app/core/evaluate/learn.py computes each widget from the core's own evaluate.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field

from app.core.teach.quiz import LANG_PATTERN, Link

StepKey = Literal["one_gpu", "dp", "zero", "tp", "pp", "3d", "tuning"]
# What a step's widget draws: per-GPU memory bars, the step's time split per variant, the
# pipeline timeline, or the rank grid.
WidgetKind = Literal["memory", "time", "timeline", "grid"]
# The number a memory bar's label adds to its size: the throughput, or TP's share of the step.
Note = Literal["rate", "tp_share"] | None


@dataclass(frozen=True)
class Variant:
    """One scenario the widget draws: ``label`` is notation (a model name, "DP 4"), not prose."""

    label: str
    query: str

    def pairs(self) -> dict[str, str]:
        return dict(p.split("=", 1) for p in self.query.split("&"))


@dataclass(frozen=True)
class Step:
    key: StepKey
    widget: WidgetKind
    variants: tuple[Variant, ...]
    quiz: int  # a question id in quiz.QUESTIONS
    views: tuple[Link, ...]  # the first is the step's own "open the full view"
    note: Note = None


def _compare(label: str, variants: tuple[Variant, ...]) -> Link:
    """/compare with the widget's scenarios as its columns (2 to 4, compare.MAX_SCENARIOS)."""
    return Link(label, "/compare", tuple(("s", v.query) for v in variants))


def _page(label: str, path: str, query: str) -> Link:
    return Link(label, path, tuple(Variant("", query).pairs().items()))


ONE = "dp=1&tp=1&pp=1"
MODELS_ON_ONE = tuple(
    Variant(name, f"model={key}&{ONE}")
    for name, key in (("GPT-3 1.3B", "gpt3-1.3b"), ("Llama 3 8B", "llama3-8b"),
                      ("Llama 3 70B", "llama3-70b"))
)  # fmt: skip
DP = tuple(Variant(f"DP {n}", f"model=gpt3-1.3b&dp={n}&tp=1&pp=1") for n in (1, 2, 4, 8))
ZERO = tuple(Variant(f"ZeRO-{z}", f"dp=8&tp=1&pp=1&zero={z}") for z in (0, 1, 2, 3))
TP = tuple(Variant(f"TP {n}", f"dp=1&tp={n}&pp=1") for n in (1, 2, 4, 8))
# The article's conveyor belt in teaching units (F = 1, B = 2, free hops), as /flow draws it.
PIPE = (Variant("PP 4, m = 8", "dp=1&tp=1&pp=4&microbatches=8&f_time=1&b_time=2&p2p_time=0"),)
# The article's own example, DP = TP = PP = 2, on 4-GPU nodes: TP and PP fill a node's
# NVLink domain and DP crosses nodes, as its layout rule says.
MESH = (Variant("DP 2 × TP 2 × PP 2", "dp=2&tp=2&pp=2&gpus_per_node=4"),)
TUNE = tuple(Variant(f"m = {m}", f"dp=2&tp=2&pp=4&microbatches={m}") for m in (4, 8, 16, 32))

STEPS: tuple[Step, ...] = (
    Step("one_gpu", "memory", MODELS_ON_ONE, 8, (
        _compare("learn.open.compare", MODELS_ON_ONE),
        _page("learn.open.overview", "/", MODELS_ON_ONE[-1].query))),
    Step("dp", "memory", DP, 1, (
        _compare("learn.open.compare", DP), _page("learn.open.primer", "/primer", DP[-1].query)),
        "rate"),
    Step("zero", "memory", ZERO, 10, (
        _compare("learn.open.compare", ZERO),
        _page("learn.open.primer", "/primer", ZERO[1].query)), "rate"),
    Step("tp", "memory", TP, 11, (
        _compare("learn.open.compare", TP),
        _page("learn.open.flow", "/flow", TP[-1].query)), "tp_share"),
    Step("pp", "timeline", PIPE, 9, (
        _page("learn.open.flow", "/flow", PIPE[0].query),
        Link("learn.open.schedules", "/compare", (("preset", "schedules"),
                                                  *PIPE[0].pairs().items())))),
    Step("3d", "grid", MESH, 13, (
        _page("learn.open.overview", "/", MESH[0].query),
        _page("learn.open.flow", "/flow", MESH[0].query))),
    Step("tuning", "time", TUNE, 15, (
        _page("learn.open.plan", "/plan", "model=llama3-8b&gpus=16"),
        _compare("learn.open.compare", TUNE))),
)  # fmt: skip
BY_KEY = MappingProxyType({s.key: s for s in STEPS})


class LearnQuery(BaseModel):
    """The /learn URL: the current step (progress) and the page language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    step: StepKey = Field("one_gpu", description="the current step of the path")
    lang: str = Field("en", max_length=16, pattern=LANG_PATTERN, description="page language")


def href(step: str, lang: str = "en") -> str:
    """The /learn URL of one step: the share link and the progress."""
    pairs = [("step", step), *([("lang", lang)] if lang != "en" else [])]
    return f"/learn?{urlencode(pairs)}"


def neighbours(key: str) -> tuple[Step | None, Step | None]:
    """The steps before and after ``key`` in the article's order."""
    i = [s.key for s in STEPS].index(key)
    return (STEPS[i - 1] if i else None, STEPS[i + 1] if i + 1 < len(STEPS) else None)
