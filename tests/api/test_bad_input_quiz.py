"""/quiz's malformed answers and only are told in a sentence, in the page's language, not
with the regular expression (which stays in the OpenAPI schema); a question or choice that
does not exist is worded in the page's language too."""

import re

import pytest

from app import i18n
from app.api import openapi_doc
from app.core.teach import quiz

SENTENCES = {
    ("answers", "en"): "question number and choice letter, comma-separated, e.g. 3b,5a",
    ("answers", "zh"): "题号加选项字母，用逗号分隔，例如 3b,5a",
    ("only", "en"): "question numbers, comma-separated, e.g. 3,5",
    ("only", "zh"): "题号，用逗号分隔，例如 3,5",
}


def banner(html: str, field: str) -> str:
    found = re.search(rf"<li><code>{field}</code>: ([^<]*)</li>", html)
    return found.group(1) if found else ""


@pytest.mark.parametrize(("field", "lang"), sorted(SENTENCES))
def test_a_malformed_value_is_told_in_a_sentence_not_a_pattern(client, field, lang):
    res = client.get(f"/quiz?{field}=zzz&lang={lang}")
    assert res.status_code == 422
    assert banner(res.text, field) == SENTENCES[field, lang]
    assert "\\d" not in res.text.split('id="page-data"')[0]  # no regex on the page


@pytest.mark.parametrize("field", ["answers", "only"])
def test_the_api_says_the_same_sentence_and_the_schema_keeps_the_pattern(client, field):
    detail = client.get(f"/api/quiz?{field}=zzz").json()["detail"][0]
    assert detail["loc"] == ["query", field]
    assert detail["msg"] == SENTENCES[field, "en"]
    assert detail["type"] == f"quiz.{field}_format"
    params = client.get("/openapi.json").json()["paths"]["/api/quiz"]["get"]["parameters"]
    schema = next(p["schema"] for p in params if p["name"] == field)
    # The document names the quiz's own ids (openapi_doc.quiz_lists), stricter than the
    # route's format pattern: a value it takes, the route takes; "zzz" neither.
    pattern = quiz.ANSWERS_PATTERN if field == "answers" else quiz.ONLY_PATTERN
    assert schema["pattern"] == openapi_doc.quiz_lists()[field]
    good = "1a,2b" if field == "answers" else "1,2"
    for value, ok in ((good, True), ("zzz", False)):
        assert bool(re.fullmatch(schema["pattern"], value)) is ok
        assert bool(re.fullmatch(pattern, value)) is ok
    assert client.get(f"/api/quiz?{field}={good}").status_code == 200


def test_the_sentences_are_the_english_catalogues_text():
    en = i18n.strings("en")
    for _, key, words in quiz.FORMATS.values():
        assert en[f"err.{key}"] == words


def test_a_question_that_does_not_exist_is_worded_in_the_pages_language(client):
    n = len(quiz.QUESTIONS)
    en = client.get("/quiz?answers=99a")
    assert banner(en.text, "answers") == f"no question 99; questions are 1 to {n}"
    zh = client.get("/quiz?answers=99a&lang=zh")
    assert banner(zh.text, "answers") == f"没有第 99 题；题号为 1 到 {n}"
    api = client.get("/api/quiz?answers=1c").json()["detail"][0]
    assert api["type"] == "quiz.choices" and api["ctx"] == {"qid": 1, "n": 2, "letter": "c"}
    zh_table = i18n.strings("zh")
    assert zh_table["err.quiz.choices"].format(**api["ctx"]) == "第 1 题只有 2 个选项，没有 c"
