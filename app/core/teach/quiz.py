"""The self-test (/quiz): the article's misconceptions and interview questions as data.

Each question names the scenario that proves its answer, as a path and query the app
already serves (the overview, /compare, /trend), so the reasoning can be checked by eye.
Texts live in ``app/i18n_quiz.py`` under ``quiz.<key>.*``; this module holds no language.
Progress is the URL's ``answers`` (``3b,5a``: question 3 answered with its second choice,
question 5 with its first), so a teacher can share a set, and ``only`` picks the questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Literal
from urllib.parse import urlencode

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo
from pydantic_core import PydanticCustomError

LETTERS = "abcd"
TRUE, FALSE = 0, 1  # a claim's two choices, in this order


class QuizError(ValueError):
    """A well-formed query that names a question or a choice that does not exist. ``reason``
    is English; ``key`` and ``params`` name it in the catalogues' ``errors`` group."""

    def __init__(self, field: str, key: str, template: str, /, **params: object) -> None:
        reason = template.format(**params)
        super().__init__(f"{field}: {reason}")
        self.field, self.reason, self.key, self.params = field, reason, key, params


# The spellings ``answers`` and ``only`` take: the OpenAPI schema shows the patterns; a
# refused value is told in words (FORMATS), not with the pattern.
ANSWERS_PATTERN = r"^(\d{1,3}[a-d](,\d{1,3}[a-d])*)?$"
ONLY_PATTERN = r"^(\d{1,3}(,\d{1,3})*)?$"
FORMATS = {
    "answers": (ANSWERS_PATTERN, "quiz.answers_format",
                "question number and choice letter, comma-separated, e.g. 3b,5a"),
    "only": (ONLY_PATTERN, "quiz.only_format", "question numbers, comma-separated, e.g. 3,5"),
}  # fmt: skip
# A page language: a catalogue's code (en, zh, ...); the web layer checks it against the
# catalogues it has, so the core names none.
LANG_PATTERN = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$"


def _spelled(value: str, info: ValidationInfo) -> str:
    pattern, key, words = FORMATS[str(info.field_name)]
    if not re.fullmatch(pattern, value):
        raise PydanticCustomError(key, words)
    return value


@dataclass(frozen=True)
class Link:
    """A page that shows the answer: ``label`` is a string key, ``query`` its URL pairs."""

    label: str
    path: str
    query: tuple[tuple[str, str], ...]

    def href(self, lang: str = "en") -> str:
        pairs = [*self.query, *([("lang", lang)] if lang != "en" else [])]
        return f"{self.path}?{urlencode(pairs)}" if pairs else self.path


@dataclass(frozen=True)
class Question:
    id: int
    key: str
    section: Literal["myth", "interview"]
    choices: int  # a claim has 2 (true, false); a multiple choice 3 or 4
    answer: int
    links: tuple[Link, ...]

    @property
    def claim(self) -> bool:
        return self.section == "myth"


def _cmp(*members: str) -> tuple[tuple[str, str], ...]:
    return tuple(("s", m) for m in members)


TEACH = "f_time=1&b_time=2&p2p_time=0"  # teaching units: F = 1, B = 2, free hops
ARTICLE = (("preset", "article"),)  # redirects to the article's whole demo query
GPIPE_1F1B = Link("quiz.link.gpipe_1f1b", "/compare", _cmp(
    f"pp=4&dp=1&tp=1&microbatches=8&schedule=gpipe&{TEACH}",
    f"pp=4&dp=1&tp=1&microbatches=8&schedule=1f1b&{TEACH}",
))  # fmt: skip
# GPT-3 6.7B: 32 heads, each its own KV head, so TP 16 can split them (Llama 3 8B's 8 cannot).
TP_NODE = Link("quiz.link.tp_node", "/compare", _cmp(
    "model=gpt3-6.7b&dp=2&tp=8&pp=1", "model=gpt3-6.7b&dp=1&tp=16&pp=1",
))  # fmt: skip
PP_DEPTH = Link("quiz.link.pp_depth", "/compare", _cmp(
    "dp=1&tp=4&pp=2&microbatches=8", "dp=1&tp=1&pp=8&microbatches=8",
))  # fmt: skip
DP_STATE = Link("quiz.link.dp_state", "/compare", _cmp("dp=1&tp=2&pp=2", "dp=4&tp=2&pp=2"))

QUESTIONS: tuple[Question, ...] = (
    Question(1, "dp_memory", "myth", 2, FALSE, (
        Link("quiz.link.factory", "/compare", (("preset", "factory"),)), DP_STATE)),
    Question(2, "tp_nodes", "myth", 2, FALSE, (TP_NODE,)),
    Question(3, "1f1b_bubble", "myth", 2, FALSE, (GPIPE_1F1B,)),
    Question(4, "more_pp", "myth", 2, FALSE, (PP_DEPTH, Link("quiz.link.trend_pp", "/trend", (
        ("knob", "pp"), ("values", "1,2,4,8"), ("series", "none"), ("tp", "1"), ("dp", "1"),
        ("microbatches", "8"))))),
    Question(5, "grad_accum", "myth", 2, FALSE, (Link("quiz.link.accum", "/compare", _cmp(
        "dp=4&tp=2&pp=2&microbatches=4", "dp=2&tp=2&pp=2&microbatches=8")),)),
    Question(6, "gpus_sum", "myth", 2, FALSE, (Link("quiz.link.article", "/", ARTICLE),)),
    Question(7, "more_m", "myth", 2, FALSE, (Link("quiz.link.more_m", "/compare", _cmp(
        f"pp=4&dp=1&tp=1&microbatches=4&schedule=gpipe&{TEACH}",
        f"pp=4&dp=1&tp=1&microbatches=16&schedule=gpipe&{TEACH}")),)),
    Question(8, "bf16_all", "myth", 2, FALSE, (Link("quiz.link.dtype", "/compare", _cmp(
        "dp=1&tp=2&pp=2&dtype=fp32", "dp=1&tp=2&pp=2&dtype=bf16")),)),
    Question(9, "bubble_formula", "interview", 4, 0, (
        Link("quiz.link.article", "/", ARTICLE), GPIPE_1F1B)),
    Question(10, "memory_formula", "interview", 4, 1, (DP_STATE,)),
    Question(11, "tp_nvlink", "interview", 4, 2, (TP_NODE,)),
    Question(12, "comm_order", "interview", 3, 0, (Link("quiz.link.node", "/", (
        ("dp", "2"), ("tp", "8"), ("pp", "8"), ("microbatches", "16"),
        ("gpus_per_node", "8"))),)),
    Question(13, "gpu5", "interview", 4, 3, (
        Link("quiz.link.gpu5", "/", (*ARTICLE, ("rank", "5"))),)),
    Question(14, "interleaved", "interview", 3, 1, (Link("quiz.link.interleaved", "/compare", _cmp(
        f"pp=4&dp=1&tp=1&microbatches=8&schedule=1f1b&{TEACH}",
        f"pp=4&dp=1&tp=1&microbatches=8&schedule=interleaved&virtual_stages=2&{TEACH}")),)),
    Question(15, "tp_share", "interview", 3, 0, (TP_NODE, Link("quiz.link.trend_tp", "/trend", (
        ("knob", "tp"), ("values", "1,2,4,8,16"), ("series", "none"), ("dp", "1"),
        ("pp", "1"))))),
)  # fmt: skip
BY_ID = {q.id: q for q in QUESTIONS}


class QuizQuery(BaseModel):
    """The /quiz URL: language, answers so far, and the questions shown (all by default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lang: str = Field("en", max_length=16, pattern=LANG_PATTERN, description="page language")
    answers: Annotated[str, AfterValidator(_spelled)] = Field(
        "", max_length=400, json_schema_extra={"pattern": ANSWERS_PATTERN},
        description="question number and choice letter, comma-separated: 3b,5a",
    )  # fmt: skip
    only: Annotated[str, AfterValidator(_spelled)] = Field(
        "", max_length=400, json_schema_extra={"pattern": ONLY_PATTERN},
        description="the question numbers to show, comma-separated (default: all)",
    )  # fmt: skip


def _known(qid: int, field: str) -> Question:
    if qid not in BY_ID:
        raise QuizError(field, "quiz.no_question", "no question {qid}; questions are 1 to {n}",
                        qid=qid, n=len(QUESTIONS))  # fmt: skip
    return BY_ID[qid]


def picks(query: QuizQuery) -> dict[int, int]:
    """The answers as {question id: choice index}; raises QuizError naming ``answers``."""
    out: dict[int, int] = {}
    for item in filter(None, query.answers.split(",")):
        q, choice = _known(int(item[:-1]), "answers"), LETTERS.index(item[-1])
        if choice >= q.choices:
            raise QuizError(
                "answers", "quiz.choices", "question {qid} has {n} choices, not {letter}",
                qid=q.id, n=q.choices, letter=item[-1],
            )  # fmt: skip
        if q.id in out:
            raise QuizError("answers", "quiz.twice", "question {qid} is answered twice", qid=q.id)
        out[q.id] = choice
    return out


def shown(query: QuizQuery) -> list[Question]:
    """The questions the URL asks for, in their own order; raises QuizError naming ``only``."""
    ids = {_known(int(x), "only").id for x in filter(None, query.only.split(","))}
    return [q for q in QUESTIONS if not ids or q.id in ids]


def encode(answers: dict[int, int]) -> str:
    """The ``answers`` value for these picks, by question number: one spelling per state."""
    return ",".join(f"{qid}{LETTERS[c]}" for qid, c in sorted(answers.items()))


def href(query: QuizQuery, answers: dict[int, int]) -> str:
    """The /quiz URL of this state: the share link."""
    pairs = {"lang": query.lang if query.lang != "en" else "", "only": query.only,
             "answers": encode(answers)}  # fmt: skip
    # Commas stay literal: "answers=3b,5a" is what a teacher reads and types.
    text = urlencode({k: v for k, v in pairs.items() if v}, safe=",")
    return f"/quiz?{text}" if text else "/quiz"


def progress(questions: list[Question], answers: dict[int, int]) -> dict[str, int]:
    """How many of the shown questions are answered, and how many of those correctly."""
    done = [q for q in questions if q.id in answers]
    right = sum(answers[q.id] == q.answer for q in done)
    return {"total": len(questions), "answered": len(done), "correct": right}
