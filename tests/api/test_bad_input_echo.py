"""An error quotes at most 80 characters of what the user typed, with an ellipsis and the
original length: a 10 kB ``?model=`` is not sent back whole in the message beside the
control, in a JSON 422, in a compare column's or a sweep point's reason, or as the name of
an unknown parameter. (The form's own fields and the share links still carry the value: they
are the page's state, not an error's echo.)"""

import re

import pytest

from tests.page_html import page_data

ECHO_LIMIT = 80  # app.core.support.echo.ECHO_LIMIT, the most of an input an error quotes
BIG = "m" * 10_000
LONG = re.compile(f"m{{{ECHO_LIMIT + 1},}}")
# Where a page or a JSON body keeps an error's words.
ERROR_KEYS = {"errors", "error", "detail", "reason", "msg", "ctx", "params"}


def error_texts(obj, inside: bool = False):
    """Every string under an error key, and the keys of an errors dict (parameter names)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            here = inside or k in ERROR_KEYS
            if inside and isinstance(k, str):
                yield k
            yield from error_texts(v, here)
    elif isinstance(obj, list):
        for v in obj:
            yield from error_texts(v, inside)
    elif isinstance(obj, str) and inside:
        yield obj


def body_of(res) -> object:
    if res.headers["content-type"].startswith("application/json"):
        return res.json()
    return page_data(res.text)


URLS = [
    "/?model={big}",
    "/?model={big}&lang=zh",
    "/api/scenario?model={big}",
    "/api/scenario?hardware={big}",
    "/?order={big}",
    "/?{big}=1",
    "/api/scenario?{big}=1",
    "/compare?model={big}",
    "/api/compare?model={big}",
    "/compare?preset={big}",
    "/compare?s={big}&s=dp%3D1",
    "/trend?model={big}",
    "/api/sweep?model={big}",
    "/plan?model={big}",
    "/api/plan?model={big}",
    "/quiz?{big}=1",
    "/api/quiz?{big}=1",
]


@pytest.mark.parametrize("url", URLS)
def test_errors_echo_at_most_80_characters_with_the_length(client, url):
    res = client.get(url.format(big=BIG))
    assert res.status_code in (200, 422)
    texts = list(error_texts(body_of(res)))
    assert texts, "the refusal is reported"
    assert not [t for t in texts if LONG.search(t)], "an error echoes the whole value"
    cut = [t for t in texts if "…" in t]
    assert cut and all("10,000" in t for t in cut), cut
    if res.headers["content-type"].startswith("text/html"):  # and the page's own HTML
        shown = re.findall(r'data-err-for="[^"]*">([^<]*)<|<li><code>([^<]*)</code>: ([^<]*)<',
                           res.text)  # fmt: skip
        assert not [s for s in shown if LONG.search("".join(s))]


def test_the_quizs_long_values_are_refused_without_echo(client):
    for field in ("answers", "only", "lang"):
        res = client.get(f"/quiz?{field}={BIG}")
        assert res.status_code == 422
        assert not [t for t in error_texts(page_data(res.text)) if LONG.search(t)]
        api = client.get(f"/api/quiz?{field}={BIG}")
        assert api.status_code == 422 and not LONG.search(api.text)


def test_a_chinese_page_words_the_cut_in_chinese(client):
    res = client.get(f"/?model={BIG}&lang=zh")
    text = page_data(res.text)["errors"]["model"]
    assert f"'{'m' * ECHO_LIMIT}…'（共 10,000 个字符）" in text
    assert text.startswith("未知的模型预设 ")


def test_echo_quotes_short_values_whole_and_cuts_long_ones():
    from app.core.support.echo import ECHO_LIMIT as LIMIT
    from app.core.support.echo import echo

    assert LIMIT == ECHO_LIMIT
    assert echo("llama") == "'llama'" and echo("llama").length is None
    long = echo("x" * 81)
    assert long == f"'{'x' * 80}…' (81 characters)" and long.length == 81
    assert echo("y" * 200, quote=False) == f"{'y' * 80}… (200 characters)"
