"""A Chinese page's dropdowns show Chinese words: every <option> label's Latin-letter words are
names (schedules, frameworks, dtypes, axes, the formulas' variables), never an ordinary English
word such as "none" or "selective" left untranslated. The option values, what a link carries,
are the same in every language."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from app import i18n
from app.api import controls

PAGES = ("/", "/flow", "/compare", "/trend", "/plan", "/learn", "/primer", "/quiz", "/fidelity")

# Terms of art and names, kept in every language. A new option whose label is an ordinary
# English word fails the test until the catalogue words it (opt.<field>.<value>).
SCHEDULES = {"gpipe", "1f1b", "interleaved", "looped-bfs", "zb-h1", "zb-h2", "interleaved-zb",
             "zbv", "dualpipev", "dualpipe"}  # fmt: skip
FRAMEWORKS = {"picotron", "megatron", "deepspeed", "torchtitan", "Llama", "Ulysses"}
FORMATS = {"bf16", "fp16", "fp32", "fa1", "fa2", "mxfp8", "FP8", "amax"}
# The parallel axes and the formulas' variables (m micro-batches, p stages, b micro-batch
# size, B global batch, v chunks per GPU); "zero" is ZeRO's field name in "zero=3".
AXES = {"dp", "tp", "pp", "cp", "ep", "DP", "TP", "PP", "CP", "EP", "HSDP", "dp_shard", "zero"}
VARIABLES = {"m", "p", "b", "B", "v"}
ALLOWED = SCHEDULES | FRAMEWORKS | FORMATS | AXES | VARIABLES
# Selects whose every option is a product name from a registry (model presets, GPUs).
NAMED_FIELDS = {"model", "hardware"}
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


class Options(HTMLParser):
    """(select name or id, option value, option label) of every <option> in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str, str]] = []
        self._select = ""
        self._option: list | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "select":
            self._select = a.get("name") or a.get("id") or ""
        elif tag == "option":
            self._option = [a.get("value"), ""]

    def handle_data(self, data):
        if self._option is not None:
            self._option[1] += data

    def handle_endtag(self, tag):
        if tag == "option" and self._option is not None:
            value, label = self._option
            self.found.append((self._select, value, label.strip()))
            self._option = None


def options(html: str) -> list[tuple[str, str, str]]:
    parser = Options()
    parser.feed(html)
    return parser.found


def english_words(label: str) -> list[str]:
    """The label's Latin-letter words that are not names; an order (tp-pp-dp) is axes."""
    words = [w.strip(".-") for w in WORD.findall(label) if re.search("[A-Za-z]", w)]
    is_order = lambda w: all(part in AXES for part in w.split("-"))  # noqa: E731
    return [w for w in words if w not in ALLOWED and not is_order(w)]


def untranslated(html: str) -> list[str]:
    return [
        f"{name}={value}: {label!r}"
        for name, value, label in options(html)
        if english_words(label) and not (name in NAMED_FIELDS and label == value)
    ]


@pytest.mark.parametrize("path", PAGES)
def test_a_chinese_page_words_every_dropdown_choice_in_chinese(client, path):
    zh = client.get(path, params={"lang": "zh"})
    assert zh.status_code == 200
    assert untranslated(zh.text) == []
    # The values are the links' own: the same on the English page, in the same order.
    en = client.get(path)
    assert [(n, v) for n, v, _ in options(zh.text)] == [(n, v) for n, v, _ in options(en.text)]


def test_the_checker_flags_an_english_word_and_passes_names():
    html = (
        '<select name="recompute"><option value="none">none</option></select>'
        '<select name="order"><option value="tp-pp-dp">tp-pp-dp (原文, picotron)</option></select>'
        '<select name="hardware"><option value="h100-sxm">h100-sxm</option></select>'
    )
    assert untranslated(html) == ["recompute=none: 'none'"]


def test_the_compare_editors_choices_are_names_or_worded_in_chinese():
    # compare.js builds its editor's schedule select from the page data's list (the
    # schedule control's values) and words each with opt.schedule.<value> where it can.
    table = i18n.default().table("zh")
    fields = {f["name"]: f for f in controls.scenario_fields()}
    shown = [
        table.get(f"opt.schedule.{o['value']}", o["value"]) for o in fields["schedule"]["options"]
    ]
    assert [s for s in shown if english_words(s)] == []
