"""Large numbers read as numbers: tokens/s in the page language's compact form, never 6.37e+4."""

import re

import pytest

from tests.browser.conftest import api, open_view

pytestmark = pytest.mark.browser
QUERY = "dp=8&tp=1&pp=1&model=llama3-8b"  # tens of thousands of tokens/s


@pytest.mark.parametrize("lang,unit", [("en", "K"), ("zh", "万")])
def test_tokens_per_second_is_compact_in_each_language(page, base_url, lang, unit):
    tokens = api(base_url, "/api/scenario", QUERY)["tokens_per_s"]
    assert tokens >= 1e4
    open_view(page, f"{base_url}/?{QUERY}&lang={lang}", "overview")
    text = page.locator("#card-perf").inner_text()
    assert not re.search(r"\de[+-]\d", text)
    assert unit in text
