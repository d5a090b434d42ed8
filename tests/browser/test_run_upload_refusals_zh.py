"""The upload card on /runs in Chromium at 390 px in zh: a refusal is said in Chinese (issue
25), whether the server refused the file (a keyed 422, app/core/traces/refusals.py, worded
from the catalogue's err.trace.<key> with the file the user chose) or the request (a wrong
token: live.upload.why.403), with nothing of the server's English sentence left and the card
no wider than the phone. Screenshot: screenshots/run_upload_refused_zh_390.png."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app import i18n
from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import ServerThread, api, shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
TOKEN = "browser-refusal-token-0123456789"
NO_RANK = TRACES / "hta" / "distributed_info_not_found.json.gz"
ERROR_SHOWN = "document.getElementById('upload-error').textContent !== ''"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("refusals") / "r.sqlite3"
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as url:
        yield url


def _send(page, files: list[Path], token: str) -> str:
    page.evaluate("document.getElementById('upload-error').textContent = ''")
    page.set_input_files("#upload-files", [str(p) for p in files])
    page.fill("#upload-run", "refused-zh")
    page.fill("#upload-token", token)
    page.click("#upload-send")
    page.wait_for_function(ERROR_SHOWN)
    return page.locator("#upload-error").inner_text()


def test_refusals_are_said_in_chinese_on_a_phone(context, watch, base, tmp_path):
    watch.allowed_errors += ["status of 403", "status of 422"]  # the refusals below
    words = i18n.strings("zh")
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{base}/runs?lang=zh", wait_until="domcontentloaded")
    wrong = _send(page, [NO_RANK], "a-wrong-token-of-enough-length")
    assert wrong == f"{words['live.upload.failed']} (403): {words['live.upload.why.403']}"
    refused = _send(page, [NO_RANK], TOKEN)
    said = words["err.trace.no_rank"].format(file=NO_RANK.name)
    assert refused == f"{words['live.upload.failed']} (422): {said}"
    assert "so its rank is unknown" not in refused  # the English reason is not shown
    assert re.search(r"[\u4e00-\u9fff]", said)
    # Two files: the page packs them into a tar; a member that is no format is named.
    notes = tmp_path / "notes.txt"
    notes.write_text("not a log\n")
    mixed = _send(page, [next((TRACES / "gloo_dp2_pp2").iterdir()), notes], TOKEN)
    said = words["err.trace.unknown_format"].format(file="notes.txt")
    assert mixed == f"{words['live.upload.failed']} (422): {said}"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.locator("#upload").scroll_into_view_if_needed()
    shot(page, "run_upload_refused_zh_390")
    assert all(r["run"] != "refused-zh" for r in api(base, "/api/runs", "")["runs"])


@pytest.mark.parametrize("name", ["", "has space", "-starts-with-a-dash", "dir/run"])
def test_a_bad_run_name_is_said_in_words_before_anything_is_sent(context, base, name):
    words = i18n.strings("zh")
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{base}/runs?lang=zh", wait_until="domcontentloaded")
    sent = []
    page.on("request", lambda r: sent.append(r.url) if "/api/runs/import" in r.url else None)
    page.set_input_files("#upload-files", [NO_RANK])
    page.fill("#upload-run", name)
    page.fill("#upload-token", TOKEN)
    page.click("#upload-send")
    page.wait_for_function(ERROR_SHOWN)
    said = page.locator("#upload-error").inner_text()
    assert said == words["live.upload.bad_run"] and "A-Za-z" not in said
    assert sent == []


def test_a_rank_order_no_layout_takes_is_said_in_chinese_before_the_upload(context, watch, base):
    """The importer's refusal was English ("layout: order 'xyz' must be a permutation ...")
    and came after the upload; the route asks first, keyed as the overview's order error."""
    watch.allowed_errors += ["status of 422"]  # the refusal itself
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{base}/runs?lang=zh", wait_until="domcontentloaded")
    page.fill("#upload-order", "tp-xyz")
    said = _send(page, [NO_RANK], TOKEN)
    assert said.startswith(i18n.strings("zh")["live.upload.failed"]) and "422" in said
    assert "必须是" in said and "tp-xyz" in said and "must be" not in said
    assert all(r["run"] != "refused-zh" for r in api(base, "/api/runs", "")["runs"])
