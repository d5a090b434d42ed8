"""/runs/{run}'s memory card in Chromium at 1440 px, en and zh (issue 23): a GPU run's
measured peak allocated and reserved per rank beside the cost model's figures for its
stage; a CPU run says "not measured on CPU" and labels its one figure as the host's RSS.
Screenshots go to screenshots/run_memory_*.png."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app import i18n
from app.core.inputs.protocol import ProbeRecord
from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import SHOTS, ServerThread, api

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from support import TOKEN, records, run_info  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
GIB = 2**30


def _ops(info, extra):
    ops = [("hello", (info, 0, 0, 1.0))]
    for step in range(3):
        ops += [("record", (ProbeRecord.model_validate(r | extra(r)), 2.0))
                for r in records(info, step, t0=1000.0 + step)]  # fmt: skip
    return ops


def _gpu_peaks(rec):
    alloc = (rec["rank"] + 1) * GIB
    return {"mem": alloc, "mem_allocated": alloc, "mem_reserved": alloc * 5 // 4}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("memory") / "m.sqlite3"
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    gpu = run_info("mem-gpu", dp=2, pp=2, steps=3).model_copy(update={"device": "cuda"})
    cpu = run_info("mem-cpu", dp=2, pp=2, steps=3)
    with ServerThread(app) as url:
        app.state.live.store.transaction(_ops(gpu, _gpu_peaks) + _ops(cpu, lambda r: {}))
        yield url


def _open(page, url: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function("document.querySelectorAll('#memory-table tr[data-rank]').length > 0")


def _rows(page) -> list[list[str]]:
    return [
        r.locator("td").all_inner_texts() for r in page.locator("#memory-table tr[data-rank]").all()
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_gpu_run_shows_measured_peaks_beside_the_prediction(context, base, lang):
    words = i18n.strings(lang)
    page = context.new_page()
    _open(page, f"{base}/runs/mem-gpu?lang={lang}")
    memory = api(base, "/api/runs/mem-gpu/analysis", "step=2")["memory"]
    heads = page.locator("#memory-table th").all_inner_texts()
    assert heads[2:4] == [
        words["live.memory.allocated_measured"],
        words["live.memory.allocated_predicted"],
    ]
    assert words["live.memory.rss"] not in heads  # on a GPU run there is no RSS column
    rows = _rows(page)
    assert [r[0] for r in rows] == ["0", "1", "2", "3"]
    for row, want in zip(rows, memory["per_rank"], strict=True):
        assert row[2] == f"{want['allocated_bytes'] / GIB:.2f} GiB (×{want['allocated_ratio']:.2f})"
        assert row[4].startswith(f"{want['reserved_bytes'] / GIB:.2f} GiB")
        assert row[3] != "—" and row[6] != "—"  # the model's allocated and total
    assert words["live.memory.not_on_cpu"] not in page.locator("#memory-card").inner_text()
    assert not page.locator("#memory-cpu-hint").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440
    page.locator("#memory-card").scroll_into_view_if_needed()
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"run_memory_gpu_{lang}.png"), full_page=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_cpu_run_says_not_measured_and_labels_its_figure_rss(context, base, lang):
    words = i18n.strings(lang)
    page = context.new_page()
    _open(page, f"{base}/runs/mem-cpu?lang={lang}")
    heads = page.locator("#memory-table th").all_inner_texts()
    assert heads[-1] == words["live.memory.rss"]
    for row in _rows(page):
        assert row[2] == row[4] == words["live.memory.not_on_cpu"]
        assert row[3] != "—" and row[-1].endswith(("KiB", "MiB"))  # predicted; host RSS
    assert page.locator("#memory-cpu-hint").is_visible()
    option = page.locator('#heat-metric option[value="mem_bytes"]').inner_text()
    assert option == words["live.metric.mem_rss"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"run_memory_cpu_{lang}.png"), full_page=True)
