"""Importing a Hugging Face config.json on the scenario pages, in real Chromium."""

import json
from urllib.parse import parse_qs, urlparse

import pytest

from app import i18n
from tests.browser.conftest import SHOTS, open_view, url_of

pytestmark = pytest.mark.browser

# meta-llama/Llama-3.2-3B/config.json, the keys that shape the model.
LLAMA32_3B = {
    "architectures": ["LlamaForCausalLM"], "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 3072, "intermediate_size": 8192, "max_position_embeddings": 131072,
    "model_type": "llama", "num_attention_heads": 24, "num_hidden_layers": 28,
    "num_key_value_heads": 8, "tie_word_embeddings": True, "vocab_size": 128256,
}  # fmt: skip


def query_of(page):
    return {k: v[0] for k, v in parse_qs(urlparse(url_of(page)).query).items()}


def embedded_model(page):
    data = json.loads(page.locator("#page-data").text_content())
    return data["model"]["model"]


def open_import(page):
    page.locator("#hf-import summary").click()
    assert page.locator("#hf-config").is_visible()


def test_a_pasted_config_becomes_the_url_and_the_model(page, base_url):
    open_view(page, f"{base_url}/?dp=4&tp=2&pp=2&microbatches=8", "overview")
    open_import(page)
    page.locator("#hf-config").fill(json.dumps(LLAMA32_3B, indent=2))
    page.locator("#hf-submit").click()
    # What the file set is listed with each config key before the page changes.
    listed = page.locator("#hf-set").inner_text()
    assert (
        "layers 28 (num_hidden_layers)" in listed and "kv_heads 8 (num_key_value_heads)" in listed
    )
    assert "seq_len" not in listed
    kept = page.locator("#hf-kept").inner_text()
    assert "131072" in kept and "8192" in kept  # the context, and the page's own length
    page.locator("#hf-apply").click()
    page.wait_for_url("**model=custom**")
    page.wait_for_selector("body[data-ready=overview]")
    q = query_of(page)
    assert (q["dp"], q["tp"], q["pp"], q["microbatches"]) == ("4", "2", "2", "8")
    assert (q["layers"], q["hidden"], q["heads"], q["kv_heads"]) == ("28", "3072", "24", "8")
    # The training length stays the page's (the preset's 8,192), not the 131,072 context.
    assert q["seq_len"] == "8192"
    assert (q["gated_mlp"], q["tied_embeddings"], q["learned_positions"]) == (
        "true",
        "true",
        "false",
    )
    # The model fields beside the form show the shape, and the page drew that model.
    assert page.locator("#more-controls").get_attribute("open") is not None
    assert page.locator('#controls [name="layers"]').input_value() == "28"
    assert page.locator('#controls [name="ffn_hidden"]').input_value() == "8192"
    assert page.locator('#controls [name="tied_embeddings"]').is_checked()
    model = embedded_model(page)
    assert (model["layers"], model["hidden"], model["kv_heads"]) == (28, 3072, 8)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "hf_imported.png"), full_page=True)


def test_an_uploaded_file_imports_on_the_flow_page_and_keeps_its_view(page, base_url, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA32_3B, "num_hidden_layers": 16}))
    open_view(page, f"{base_url}/flow?pp=4&speed=4", "flow")
    open_import(page)
    page.locator("#hf-file").set_input_files(str(path))
    page.wait_for_function(
        "document.getElementById('hf-config').value.includes('LlamaForCausalLM')"
    )
    page.locator("#hf-submit").click()
    page.locator("#hf-apply").click()
    page.wait_for_url("**layers=16**")
    page.wait_for_selector("body[data-ready=flow]")
    assert urlparse(url_of(page)).path == "/flow"
    q = query_of(page)
    assert (q["pp"], q["speed"], q["model"]) == ("4", "4", "custom")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"architectures": ["BertModel"]}', "architectures: BertModel is not supported"),
        # Experts without how many each token takes: refused, naming the missing key.
        (json.dumps({**LLAMA32_3B, "num_local_experts": 8}), "num_experts_per_tok"),
        ("{not json", "not valid JSON"),
    ],
)
def test_a_bad_config_shows_why_beside_the_control_and_stays(page, base_url, watch, text, words):
    watch.allowed_errors.append("status of 422")  # the refused POST, logged by Chromium
    url = f"{base_url}/?dp=4"
    open_view(page, url, "overview")
    open_import(page)
    page.locator("#hf-config").fill(text)
    page.locator("#hf-submit").click()
    err = page.locator("#hf-error")
    err.filter(has_text=words).wait_for()
    assert i18n.strings("en")["hf.failed"] in err.inner_text()
    assert url_of(page) == url


def test_an_empty_submit_asks_for_a_config(page, base_url):
    open_view(page, f"{base_url}/", "overview")
    open_import(page)
    page.locator("#hf-submit").click()
    assert page.locator("#hf-error").inner_text().endswith(i18n.strings("en")["hf.empty"])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [1440, 390])
def test_screenshots_of_the_import_control(page, base_url, watch, lang, width):
    watch.allowed_errors.append("status of 422")
    page.set_viewport_size({"width": width, "height": 900})
    open_view(page, f"{base_url}/?lang={lang}", "overview")
    strings = i18n.strings(lang)
    assert page.locator("#hf-import summary").inner_text() == strings["hf.title"]
    open_import(page)
    page.locator("#hf-config").fill('{"architectures": ["BertModel"]}')
    page.locator("#hf-submit").click()
    page.locator("#hf-error").filter(has_text=strings["hf.failed"]).wait_for()
    box = page.locator("#hf-import").bounding_box()
    side = page.locator("#controls").bounding_box()
    # The control stays inside the form's column at either width (no overflow sideways).
    assert box["x"] >= side["x"] and box["x"] + box["width"] <= side["x"] + side["width"] + 1
    page.locator("#hf-submit").scroll_into_view_if_needed()
    SHOTS.mkdir(exist_ok=True)
    page.locator("#controls").screenshot(path=str(SHOTS / f"hf_{lang}_{width}.png"))
    page.screenshot(path=str(SHOTS / f"hf_{lang}_{width}_page.png"))


@pytest.mark.parametrize(
    ("path", "view", "kept"),
    [
        ("/trend?dp=4", "trend", "dp"),
        ("/compare?preset=factory&microbatches=8", "compare", "preset"),
    ],
)
def test_the_other_scenario_pages_import_into_their_own_url(page, base_url, path, view, kept):
    open_view(page, f"{base_url}{path}", view)
    open_import(page)
    page.locator("#hf-config").fill(json.dumps(LLAMA32_3B))
    page.locator("#hf-submit").click()
    page.locator("#hf-apply").click()
    page.wait_for_url("**model=custom**")
    page.wait_for_selector(f"body[data-ready={view}]")
    assert urlparse(url_of(page)).path == path.split("?")[0]
    q = query_of(page)
    assert kept in q and q["layers"] == "28"
