"""A folder uploaded on /runs keeps its files' paths (issue 25 item 4): torchtitan's profiling
cycles (traces/iteration_N/rankK_trace.json.gz) chosen as a folder are packed into the tar
under their paths, so the server reads each cycle's steps as its own (the card used to pack
files by their bare names, and rank0 of two cycles collided). A folder's other files are left
out and counted; a folder dropped on the card is walked the same way (a File and Directory
Entries tree standing in for the browser's). The layout comes from a scenario link pasted in
the card. Chromium at 1440 px (en) and 390 px (zh)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from app import i18n
from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import ServerThread, api, shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
TOKEN = "browser-folder-token-0123456789"
CYCLES = Path(__file__).resolve().parents[1] / "importers" / "test_import_cycles.py"
# A dropped folder, as webkitGetAsEntry gives it: directories read in batches, then empty.
DROP_FOLDER = """(() => {
  const file = (name) => ({ isFile: true, isDirectory: false, name,
    file: (ok) => ok(new File(["{}"], name)) });
  const dir = (name, kids) => ({ isFile: false, isDirectory: true, name,
    createReader: () => { let done = false;
      return { readEntries: (ok) => { ok(done ? [] : kids); done = true; } }; } });
  const first = dir("iteration_3", [file("rank0_trace.json"), file("rank1_trace.json")]);
  const root = dir("traces", [first, dir("iteration_13", [file("rank0_trace.json")]),
                              file("notes.txt")]);
  const ev = new DragEvent("drop", { bubbles: true, cancelable: true });
  Object.defineProperty(ev, "dataTransfer",
    { value: { items: [{ webkitGetAsEntry: () => root }], files: [] } });
  document.getElementById("upload-drop").dispatchEvent(ev);
})()"""


def _write_cycle():
    spec = importlib.util.spec_from_file_location("import_cycles_fixture", CYCLES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.write_cycle, module.LATER


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Two cycles of the gloo dp=2 x pp=2 traces and a file that is not a trace."""
    write_cycle, later = _write_cycle()
    traces = tmp_path_factory.mktemp("folder") / "traces"
    write_cycle(traces, 0)
    write_cycle(traces, later)
    (traces / "notes.txt").write_text("not a trace\n")
    return traces


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("upload-folder") / "u.sqlite3"
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as url:
        yield url


@pytest.mark.parametrize(("lang", "width"), [("en", 1440), ("zh", 390)])
def test_a_folder_of_cycles_becomes_one_run_with_each_cycles_steps(
    context, watch, base, folder, lang, width
):
    words = i18n.strings(lang)
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base}/runs?lang={lang}", wait_until="domcontentloaded")
    assert words["live.upload.folder"] in page.locator("#upload").inner_text()
    page.set_input_files("#upload-folder", str(folder))
    chosen = page.locator("#upload-chosen").inner_text()
    assert "traces/iteration_3/rank0_trace.json.gz" in chosen
    assert "traces/iteration_13/rank0_trace.json.gz" in chosen
    assert words["live.upload.skipped"].format(n=1) in chosen  # notes.txt left out
    assert page.input_value("#upload-run") == "traces"
    run = f"folder-{lang}"
    page.fill("#upload-run", run)
    page.fill("#upload-token", TOKEN)
    # The layout from a scenario link, as the overview's Copy link gives it (dp, pp: defaults).
    page.fill("#upload-scenario", f"{base}/?tp=1&schedule=gpipe&microbatches=2&lang={lang}")
    page.click("#upload-send")
    page.wait_for_selector("#upload-link")
    info = api(base, f"/api/runs/{run}", "")
    info = info.get("info", info)
    assert (info["dp"], info["tp"], info["pp"], info["schedule"], info["microbatches"]) == (
        2, 1, 2, "gpipe", 2)  # fmt: skip
    steps, since = [], -1
    while since is not None:  # every page of what the run serves
        answer = api(base, f"/api/runs/{run}/steps", f"since={since}")
        steps, since = steps + answer["records"], answer["next_since"]
    assert sorted((r["rank"], r["step"]) for r in steps) == [
        (k, s) for k in range(4) for s in (0, 1, 2, 10, 11, 12)
    ]
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"run_upload_folder_{lang}_{width}")


def test_a_dropped_folder_is_walked_with_its_paths(context, watch, base):
    page = context.new_page()
    page.goto(f"{base}/runs", wait_until="domcontentloaded")
    page.evaluate(DROP_FOLDER)
    page.wait_for_function("document.getElementById('upload-chosen').textContent.includes('3 ')")
    chosen = page.locator("#upload-chosen").inner_text()
    for path in ("traces/iteration_3/rank0_trace.json", "traces/iteration_3/rank1_trace.json",
                 "traces/iteration_13/rank0_trace.json"):  # fmt: skip
        assert path in chosen
    assert i18n.strings("en")["live.upload.skipped"].format(n=1) in chosen
