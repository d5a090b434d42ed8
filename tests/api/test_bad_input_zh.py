"""Validation messages on a Chinese page are Chinese throughout: the core's cross-field
errors (ScenarioError and the compare/sweep/quiz ones) carry a message key and params, and
the page words them from the catalogue's ``errors`` group. English pages say what they said.

"Chinese throughout" is checked as: no run of 3+ ASCII letters in the message except the
names in ALLOWED (field names, units and identifiers a user types or reads in code).
"""

import ast
import re
from pathlib import Path

import pytest

from app import i18n
from app.api import controls
from app.core.evaluate.sweep import SWEEP_KEYS
from app.core.inputs.scenario import Scenario
from app.core.layout.topology import ORDER_PRESETS
from app.core.schedules import ScheduleName, dualpipe
from tests.page_html import error_beside, page_data

ROOT = Path(__file__).resolve().parents[2]
EN, ZH = i18n.strings("en"), i18n.strings("zh")

# Field names, units and identifiers that stay as they are in any language.
ALLOWED = (
    set(Scenario.model_fields)
    | set(SWEEP_KEYS)
    | set(controls.VIEW_KEYS)
    | {s.value for s in ScheduleName}
    | {"answers", "only", "lang", "preset", "chunks", "max", "true", "full", "Megatron",
       "false", "torch", "dualpipe", "num_ranks", "num_chunks", "GiB", "HBM", "selective",
       "GPU", "global_batch", "allgather", "FSDP", "HSDP"}
    # the trace importer's refusals name formats, files and fields as the tools spell them
    | {"PyTorch", "profiler", "trace", "distributedInfo", "ProfilerStep", "prof.step",
       "world_size", "tar", "DeepSpeed", "wall_clock_breakdown"}
    | set(ORDER_PRESETS)
)  # fmt: skip
ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z_]+)*")


def foreign_words(text: str) -> list[str]:
    """Runs of 3+ ASCII letters (identifiers with _ and digits count as one) not in ALLOWED."""
    words = [w for w in ASCII_WORD.findall(text) if sum(c.isalpha() for c in w) >= 3]
    return [w for w in words if w not in ALLOWED and w.split(".")[0] not in ALLOWED]


# Each URL, the field whose control (or banner line) shows the error, and the English text
# those pages showed before the messages had keys (it must not change).
CASES = [
    ("/?tp=3&model=llama3-8b", "tp", "heads (32) must be divisible by tp (3)"),
    ("/compare?s=dp%3D2", "s", "give 2 to 4 scenarios, got 1"),
    ("/trend?knob=pp&values=0,1,2", "values", "'0' is not a whole number from 1 to 1048576"),
    (
        "/flow?microbatches=4096&pp=64&dp=1&tp=1",
        "microbatches",
        "pp*microbatches*chunks = 64*4096*1 is too large to simulate in one request "
        "(limit 131072 chunk-microbatches)",
    ),
    # Field parsers and cross-field checks that used to raise plain English ValueErrors.
    (
        "/?order=tp-dp",
        "order",
        "order 'tp-dp' must be a permutation of dp, pp, tp joined by '-' (e.g. tp-pp-dp) or "
        "one of: article, picotron, megatron, deepspeed, torchtitan, megatron-5d",
    ),
    ("/?stage_layers=8,x", "stage_layers", "entry 1 is not a whole number of layers"),
    (
        "/?stage_layers=8,5000",
        "stage_layers",
        "entry 1 is out of bounds: each virtual stage holds 1 to 1024 layers",
    ),
    ("/?f_time=1,abc", "f_time", "entry 1 is not a number"),
    ("/?b_time=1,1e9", "b_time", "entry 1 is out of bounds: each entry is 0 to 1e+06"),
    (
        "/?hbm_gib=1&hardware=a100-80g",
        "hbm_gib",
        "1.0 GiB is not above a100-80g's per-process memory floor (1.0 GiB)",
    ),
    (
        "/?selective_ac=op&recompute=full",
        "selective_ac",
        "'op' needs recompute=selective: it says what selective recompute recomputes",
    ),
]


def shown(html: str, field: str) -> str:
    """The message as the page shows it: beside the control, else in the banner's list."""
    beside = error_beside(html, field)
    if beside:
        return beside
    found = re.search(rf"<li><code>{re.escape(field)}</code>: ([^<]*)</li>", html)
    return found.group(1) if found else ""


@pytest.mark.parametrize(("url", "field", "english"), CASES)
def test_the_chinese_page_words_the_whole_message_in_chinese(client, url, field, english):
    res = client.get(f"{url}&lang=zh")
    assert res.status_code == 422
    text = page_data(res.text)["errors"][field]
    assert text and text != english
    assert re.search(r"[\u4e00-\u9fff]", text), text
    assert foreign_words(text) == [], text
    assert shown(res.text, field).replace("&#39;", "'") == text


@pytest.mark.parametrize(("url", "field", "english"), CASES)
def test_the_english_page_says_what_it_said_before(client, url, field, english):
    res = client.get(f"{url}&lang=en")
    assert res.status_code == 422
    assert page_data(res.text)["errors"][field] == english
    assert shown(res.text, field).replace("&#39;", "'") == english


def test_the_json_422_keeps_the_english_reason_and_names_the_key_with_its_params(client):
    detail = client.get("/api/scenario?tp=3&model=llama3-8b").json()["detail"][0]
    assert detail["loc"] == ["query", "tp"]
    assert detail["msg"] == "heads (32) must be divisible by tp (3)"
    assert detail["type"] == "scenario.heads_tp" and detail["ctx"] == {"heads": 32, "tp": 3}
    # static/js/i18n.js:errorText words it from err.<type> with ctx, as the server does.
    assert ZH[f"err.{detail['type']}"].format(**detail["ctx"]) == "heads（32）必须能被 tp（3）整除"


def test_a_message_without_a_key_falls_back_to_the_english_reason(client):
    from app.api.page_data import reason_text
    from app.core.inputs.scenario import ScenarioError

    plain = ScenarioError("dp", "a reason no catalogue has")
    assert reason_text(plain, "zh") == "a reason no catalogue has"
    unknown = ScenarioError("dp", "english words", "scenario.no_such_key", {"n": 1})
    assert reason_text(unknown, "zh") == "english words"


def test_every_chinese_error_template_is_chinese_apart_from_names():
    for key, text in ZH.items():
        if key.startswith("err.") and key not in ("err.or",):
            bare = re.sub(r"\{\w+\}", "", text)
            assert foreign_words(bare) == [], (key, text)


def _keyed_calls():
    """(file, key, template) of every message key a core error is raised with, read from the
    source: ScenarioError.keyed / ScheduleError.keyed / QuizError / compare's _issue."""
    names = {"keyed", "QuizError", "_issue"}
    for path in sorted((ROOT / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name not in names or len(node.args) < 3:
                continue
            key, template = node.args[1], node.args[2]
            if isinstance(key, ast.Constant) and isinstance(template, ast.Constant):
                yield path.relative_to(ROOT), key.value, template.value


def test_each_keyed_english_template_is_the_english_catalogues_text():
    calls = list(_keyed_calls())
    assert len(calls) >= 40  # specs, one_scenario, scenario, sweep, build, compare, quiz, pages
    for path, key, template in calls:
        assert EN.get(f"err.{key}") == template, (path, key)
    for pp, m in ((3, 12), (4, 6)):  # dualpipe.rule returns its key with the filled reason
        _, reason, key, params = dualpipe.rule(pp, m)
        assert EN[f"err.{key}"].format(**params) == reason


def test_the_plan_page_words_its_own_checks_in_the_page_language(client):
    en = page_data(client.get("/plan?model=nope&lang=en").text)["errors"]["model"]
    zh = page_data(client.get("/plan?model=nope&lang=zh").text)["errors"]["model"]
    assert en.startswith("unknown model preset 'nope'; one of: tiny, ")
    assert zh.startswith("未知的模型预设 'nope'"), zh
