"""Validation messages in the page's language: pydantic's words on English pages (the same
as the JSON API), the err.<type> table on Chinese ones, filled with the error's bound."""

import re
from typing import Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from app import i18n
from app.i18n.errors import message
from tests.page_html import page_data

ERRORS = {lang: i18n.default().groups[lang]["errors"] for lang in ("en", "zh")}


class Probe(BaseModel):
    n: int = Field(1, ge=1, le=8)
    x: float = Field(0.5, gt=0.0, lt=1.0)
    lang: Literal["en", "zh"] = "en"
    flag: bool = False


def errors_of(**raw) -> list[dict]:
    with pytest.raises(ValidationError) as info:
        Probe.model_validate(raw)
    return info.value.errors()


@pytest.mark.parametrize(
    "raw",
    [
        {"n": 0},
        {"n": 9},
        {"n": "abc"},
        {"n": 1.5},
        {"x": 0},
        {"x": 1},
        {"x": "y"},
        {"flag": "maybe"},
    ]
    + [{"lang": "fr"}],
)
def test_english_is_pydantics_own_message(raw):
    (err,) = errors_of(**raw)
    assert f"err.{err['type']}" in ERRORS["en"]
    assert message(err, "en", i18n.strings("en")) == err["msg"]
    assert message(err, "zh", i18n.strings("zh")) != err["msg"]  # and Chinese has its own


def test_chinese_fills_the_bound_and_the_choices():
    zh = i18n.strings("zh")
    assert message(errors_of(n=0)[0], "zh", zh) == "应大于或等于 1"
    assert message(errors_of(x=1)[0], "zh", zh) == "应小于 1.0"
    assert message(errors_of(lang="fr")[0], "zh", zh) == "应为 'en' 或 'zh' 之一"


def test_both_languages_use_the_same_placeholders():
    for key, en in ERRORS["en"].items():
        zh = ERRORS["zh"][key]
        assert set(re.findall(r"\{(\w+)\}", en)) == set(re.findall(r"\{(\w+)\}", zh)), key


def test_an_unlisted_type_keeps_the_apis_words():
    err = {"type": "something_new", "msg": "Input is odd", "ctx": {}}
    assert message(err, "zh", i18n.strings("zh")) == "Input is odd"


def test_the_api_gives_the_bound_so_a_page_can_translate_it(client):
    res = client.get("/api/sweep", params={"stop": "0"})
    assert res.status_code == 422
    (d,) = [d for d in res.json()["detail"] if d["loc"][-1] == "stop"]
    assert d["type"] == "greater_than_equal" and d["ctx"] == {"ge": 1}


@pytest.mark.parametrize(
    "path,field", [("/", "dp"), ("/flow", "dp"), ("/trend", "stop"), ("/plan", "gpus")]
)
def test_a_chinese_page_says_why_in_chinese(client, path, field):
    res = client.get(path, params={field: "0", "lang": "zh"})
    assert res.status_code == 422
    assert page_data(res.text)["errors"][field] == "应大于或等于 1"
    res = client.get(path, params={field: "0"})
    assert page_data(res.text)["errors"][field] == "Input should be greater than or equal to 1"
