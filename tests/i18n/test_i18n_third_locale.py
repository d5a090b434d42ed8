"""Adding a language is adding one file: a stub fr.json (English, each text marked) in a
catalogue folder the app's settings name, and the pages speak it, templates and JS alike.
The stub exists only here; nothing ships a French catalogue."""

import json
import shutil
import warnings

import pytest

from app.i18n import catalog
from app.main import create_app
from app.settings import Settings
from tests.page_html import page_data

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

MARK = "[fr] "


@pytest.fixture
def fr_client(tmp_path, fidelity_board):
    folder = tmp_path / "locales"
    folder.mkdir()
    for name in ("en.json", "zh.json"):
        shutil.copy(catalog.DEFAULT_DIR / name, folder / name)
    en = json.loads((catalog.DEFAULT_DIR / "en.json").read_text(encoding="utf-8"))
    fr = {g: {k: MARK + text for k, text in texts.items()} for g, texts in en.items()}
    (folder / "fr.json").write_text(json.dumps(fr, ensure_ascii=False), encoding="utf-8")
    settings = Settings(db=tmp_path / "db.sqlite3", ingest_token="t" * 32, i18n_dir=folder)
    app = create_app(settings)
    app.state.fidelity = fidelity_board
    with TestClient(app) as client:
        yield client


def test_the_app_reads_the_languages_of_its_own_catalogue_folder(fr_client):
    assert fr_client.app.state.i18n.langs == ("en", "fr", "zh")


def test_a_page_in_the_new_language_shows_its_strings_and_embeds_its_table(fr_client):
    fr = fr_client.app.state.i18n.strings("fr")
    page = fr_client.get("/?lang=fr&dp=2")
    assert page.status_code == 200
    assert '<html lang="fr">' in page.text
    for key in ("grid.title", "cards.title", "nav.flow"):
        assert fr[key] in page.text and fr[key].startswith(MARK), key
    data = page_data(page.text)
    assert data["state"]["lang"] == "fr"
    assert data["strings"] == fr  # the table static/js/i18n.js reads: the fr catalogue's
    assert 'href="/plan?lang=fr"' in page.text  # the nav keeps the language


def test_the_new_languages_validation_messages_come_from_its_catalogue(fr_client):
    page = fr_client.get("/?lang=fr&dp=0")
    assert page.status_code == 422
    assert (
        page_data(page.text)["errors"]["dp"] == MARK + "Input should be greater than or equal to 1"
    )


def test_a_language_with_no_file_is_refused_naming_the_ones_present(fr_client):
    page = fr_client.get("/?lang=de")
    assert page.status_code == 422
    assert page_data(page.text)["errors"]["lang"] == "Input should be 'en', 'fr' or 'zh'"
    res = fr_client.get("/runs?lang=de")
    assert res.status_code == 422 and res.json()["detail"][0]["loc"] == ["query", "lang"]


def test_the_live_list_speaks_the_new_language_too(fr_client):
    page = fr_client.get("/runs?lang=fr")
    assert page.status_code == 200
    strings = page_data(page.text)["strings"]
    assert strings["nav.runs"] == MARK + "Runs" and strings["nav.runs"] in page.text
    assert '<html lang="fr">' in page.text


def test_the_self_test_speaks_the_new_language(fr_client):
    fr = fr_client.app.state.i18n.strings("fr", quiz=True)
    page = fr_client.get("/quiz?lang=fr&answers=3b")
    assert page.status_code == 200
    assert '<html lang="fr">' in page.text
    assert fr["quiz.title"].startswith(MARK) and fr["quiz.title"] in page.text
    assert 'href="/compare?lang=fr"' in page.text  # the nav keeps the language
    api = fr_client.get("/api/quiz?lang=fr&answers=3b").json()
    assert api["questions"][2]["text"] == fr[f"quiz.{api['questions'][2]['key']}.q"]
    assert api["href"] == "/quiz?lang=fr&answers=3b"
    bad = fr_client.get("/quiz?lang=fr&answers=zzz")
    assert page_data(bad.text)["errors"]["answers"] == fr["err.quiz.answers_format"]


def test_the_self_test_refuses_a_language_with_no_file(fr_client):
    page = fr_client.get("/quiz?lang=de")
    assert page.status_code == 422
    assert page_data(page.text)["errors"]["lang"] == "Input should be 'en', 'fr' or 'zh'"
    res = fr_client.get("/api/quiz?lang=de")
    assert res.status_code == 422 and res.json()["detail"][0]["loc"] == ["query", "lang"]


def test_the_shipped_app_still_refuses_the_stub_language(client):
    assert client.get("/?lang=fr").status_code == 422
    assert client.get("/quiz?lang=fr").status_code == 422
    assert client.get("/api/quiz?lang=fr").status_code == 422
    assert client.app.state.i18n.langs == ("en", "zh")
