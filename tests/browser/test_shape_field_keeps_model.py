"""A shape field typed over the preset the model box shows edits that preset. The overview's
sequence length set to 4096 wrote only seq_len=4096 to the URL; the server reads a shape
field without model= as a new custom model (Scenario._shape_without_model_is_custom), so the
page answered "a custom model needs layers, hidden and heads; layers is missing" to a user
who never chose custom. A URL shaped without model= (a custom model) stays custom."""

import json
import re
from pathlib import Path

import pytest

from app.core.inputs.scenario import ARCH_FIELDS
from tests.browser.conftest import open_view, url_of

pytestmark = pytest.mark.browser
STATE_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "state.js"


def _type(page, name: str, value: str) -> None:
    page.locator("#controls details").first.evaluate("d => d.open = true")
    box = page.locator(f'#controls [name="{name}"]')
    # The page's refetch of the scenario for the new URL, answered before anything is read.
    with page.expect_response(lambda r: "/api/scenario?" in r.url and f"{name}={value}" in r.url):
        box.fill(value)
        box.press("Tab")
    page.wait_for_selector("body[data-ready=overview]")


def test_the_pages_shape_list_is_the_servers():
    found = re.search(r"SHAPE_FIELDS = (\[.*?\]);", STATE_JS.read_text(), re.S)
    assert found and json.loads(found[1]) == list(ARCH_FIELDS)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sequence_length_typed_over_the_default_preset_keeps_the_preset(page, base_url, lang):
    open_view(page, f"{base_url}/?lang={lang}", "overview")
    _type(page, "seq_len", "4096")
    query = url_of(page).split("?", 1)[1]
    assert "model=llama3-8b" in query and "seq_len=4096" in query, query
    assert page.locator("#error-banner").is_hidden()
    assert page.locator('output.err[data-err-for="layers"]').inner_text() == ""


def test_a_custom_model_stays_custom_when_another_field_changes(page, base_url):
    open_view(page, f"{base_url}/?layers=4&hidden=256&heads=4", "overview")
    _type(page, "seq_len", "1024")
    query = url_of(page).split("?", 1)[1]
    assert "model=" not in query and "layers=4" in query, query
