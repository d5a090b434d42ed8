"""The upload card on /runs in Chromium at 1440 px (en) and 390 px (zh) (issue 25 item 4): the
four gloo dp=2 x pp=2 trace files (tests/fixtures/traces/gloo_dp2_pp2) chosen at once are
packed into one .tar by the page, sent with the ingest token, and become the run, linked
from the card with the server's summary; a wrong token and a trace without distributedInfo
are refused in words that name why. Screenshots: screenshots/run_upload_*.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import i18n
from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import ServerThread, api, shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
TOKEN = "browser-upload-token-0123456789"
DROP = """(() => { const dt = new DataTransfer();
  dt.items.add(new File(["{}"], "rank9 trace.json"));
  document.getElementById("upload-drop").dispatchEvent(
    new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
  return document.getElementById("upload-chosen").textContent; })()"""


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("upload") / "u.sqlite3"
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as url:
        yield url


def _send(page, files: list[Path], run: str, token: str) -> None:
    page.set_input_files("#upload-files", [str(p) for p in files])
    page.fill("#upload-run", run)
    page.fill("#upload-token", token)
    page.click("#upload-send")


@pytest.mark.parametrize(("lang", "width"), [("en", 1440), ("zh", 390)])
def test_traces_chosen_on_runs_become_the_run(context, watch, base, lang, width):
    watch.allowed_errors += ["status of 403", "status of 422"]  # the refusals below
    words = i18n.strings(lang)
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base}/runs?lang={lang}", wait_until="domcontentloaded")
    assert page.locator("#upload h2").inner_text() == words["live.upload.title"]
    # A drop lists what was dropped (the page's own drop handler, a synthetic DataTransfer).
    assert "rank9 trace.json" in page.evaluate(DROP)
    files = sorted((TRACES / "gloo_dp2_pp2").iterdir())
    run = f"upload-{lang}"
    _send(page, files, run, "a-wrong-token-of-enough-length")
    page.wait_for_function("document.getElementById('upload-error').textContent !== ''")
    assert page.locator("#upload-error").inner_text().startswith(words["live.upload.failed"])
    assert "403" in page.locator("#upload-error").inner_text()
    _send(page, files, run, TOKEN)
    page.wait_for_selector("#upload-link")
    link = page.locator("#upload-link")
    assert link.inner_text() == words["live.upload.open"].format(run=run)
    assert link.get_attribute("href") == f"/runs/{run}" + ("?lang=zh" if lang == "zh" else "")
    status = page.locator("#upload-status").inner_text()
    assert words["live.upload.done"].format(stored=12, records=12, ranks=4) in status
    summary = page.locator("#upload-summary").inner_text()
    assert "dp=2 tp=1 pp=2 order" in summary
    # The import's report in the page's language, line by line (app/importers/import_report.py).
    head = words["live.import.trace_head"].split("{")[0]
    assert summary.startswith(head) and words["live.import.offsets"].split("{")[0] in summary
    assert ("布局" in summary) == (lang == "zh") and ("layout" in summary) == (lang == "en")
    steps = api(base, f"/api/runs/{run}/steps", "")["records"]
    assert sorted((r["rank"], r["step"]) for r in steps) == [
        (k, s) for k in range(4) for s in range(3)
    ]
    # The table lists the run at once (live_runs.js refreshes on the page's event).
    page.wait_for_selector(f'#runs-table tr[data-run="{run}"]')
    # Nothing wider than the screen on a phone: the card wraps.
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"run_upload_{lang}_{width}")
    # A trace without distributedInfo: refused, the file named, nothing stored.
    _send(page, [TRACES / "hta" / "distributed_info_not_found.json.gz"], f"bad-{lang}", TOKEN)
    page.wait_for_function("document.getElementById('upload-error').textContent !== ''")
    error = page.locator("#upload-error").inner_text()
    assert "distributed_info_not_found.json.gz" in error and "422" in error
    assert all(r["run"] != f"bad-{lang}" for r in api(base, "/api/runs", "")["runs"])
