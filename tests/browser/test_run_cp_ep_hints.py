"""The run page's words for a run with context (cp) and expert (ep) parallelism (issue 25),
in Chromium: the timeline, grid and bubble hints name the run's own mesh ((dp, pp, cp, tp)
rows, (dp, cp, tp) columns, CP/EP among the causes), the stragglers' hint its DP × CP × TP
stage peers, a slow CP group is worded as CP exchanges in both straggler lists, the flow
link says that EP is not drawn for a model without experts, the rank squares keep one row
per DP replica, and a phone's heatmap too narrow for its cells' text leaves it to the hover.
A run whose CP ring takes much of the step is advised on it, in each language's words.
A 3D run's page says what it said before. 1440 px in English, 390 px in zh."""

from __future__ import annotations

import re
import sys
from functools import partial
from pathlib import Path

import pytest

from tests.browser.conftest import shot, stored_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from cp_ep_support import (  # noqa: E402
    cp_ep_info,
    cp_ep_records,
    plain_records,
    slow_cp_records,
    stored_ops,
)
from support import TOKEN, run_info  # noqa: E402

from app.core.inputs.protocol import run_layout  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def _ops() -> list:
    slow = cp_ep_info("slowcp", dp=2, tp=1, pp=2, cp=2, ep=2, steps=3)
    wide = cp_ep_info("wide", dp=2, tp=2, pp=1, cp=2, ep=2, steps=3)  # 8 grid columns
    plain = run_info("plain", dp=2, tp=2, pp=2, steps=3, m=4)
    heavy = cp_ep_info("heavycp", dp=2, tp=1, pp=2, cp=2, ep=1, steps=3)
    group = set(run_layout(slow).group("cp", 0))  # CP group 0's exchanges 5x as long
    slowed = partial(slow_cp_records, slow=group)
    # Every rank's exchanges 20 ms, not 2: the CP ring is most of the step.
    ring = partial(slow_cp_records, slow=set(range(8)), seconds=0.020)
    return stored_ops({slow: slowed, wide: cp_ep_records, plain: plain_records, heavy: ring})


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    with stored_server(tmp_path_factory, "cpep_hints", TOKEN, _ops()) as url:
        yield url


HINTS = """() => {
  const hints = (id) => [...document.querySelectorAll(`#${id} p.hint`)].map((p) => p.innerText);
  const texts = [...document.querySelectorAll('#heatmap text')].map((t) => t.textContent);
  return {
    timeline: hints('timeline-card').join(' '),
    where: hints('bubble-card').join(' '),
    grid: hints('heatmap-card').join(' '),
    advice: hints('advice-card').join(' '),
    stragglers: document.querySelector('#straggler-list').innerText,
    whole: document.querySelector('#whole-run-list').innerText,
    note: document.querySelector('#replay-flow-note').innerText,
    link: !document.querySelector('#replay-flow').hidden,
    squares: getComputedStyle(document.querySelector('#rank-states'))
      .gridTemplateColumns.split(' ').length,
    cellText: texts.filter((t) => t.startsWith('rank ')).length,
    overflow: document.documentElement.scrollWidth - window.innerWidth,
  };
}"""


def _open(page, url: str) -> dict:
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("body[data-drawn-step]")
    page.wait_for_selector("#heatmap g.xtick text", state="attached")
    page.wait_for_selector("#straggler-list[data-step]")
    page.wait_for_function("!document.querySelector('#whole-run-list .muted')")
    return page.evaluate(HINTS)


def test_a_cp_run_says_its_mesh_in_english_at_1440(page, base):
    page.set_viewport_size({"width": 1440, "height": 1000})
    got = _open(page, f"{base}/runs/slowcp?lang=en")
    shot(page, "run_cp_ep_hints_en_1440")
    assert "grouped by (dp, pp, cp, tp)" in got["timeline"]
    assert "columns (dp, cp, tp) triples" in got["grid"]
    assert "TP, CP and DP collectives, EP's all-to-all" in got["where"]
    assert "its DP × CP × TP peers" in got["grid"]
    for found in (got["stragglers"], got["whole"]):
        assert "Ranks 0, 1 (CP group): CP exchanges +" in found, found
        assert "live.straggler" not in found
    assert got["link"] and "without their EP 2 groups" in got["note"]
    assert "measured TP, CP, EP, DP and pipeline-wait time" in got["advice"]
    assert got["squares"] == 4  # tp 1 x cp 2 x pp 2: a DP replica a row
    assert got["cellText"] == 8 and got["overflow"] <= 0


def test_a_cp_run_says_its_mesh_in_chinese_at_390(page, base):
    page.set_viewport_size({"width": 390, "height": 844})
    got = _open(page, f"{base}/runs/slowcp?lang=zh")
    shot(page, "run_cp_ep_hints_zh_390")
    assert "按 (dp, pp, cp, tp) 分组" in got["timeline"]
    assert "列是 (dp, cp, tp) 组合" in got["grid"] and "DP × CP × TP" in got["grid"]
    assert "TP、CP 与 DP 集合通信、EP 的 All-to-All" in got["where"]
    assert "（CP 组）：CP 通信每步多" in got["stragglers"] and "（CP 组）" in got["whole"]
    assert "EP 2 的专家组" in got["note"]
    assert got["overflow"] <= 0


def test_a_phones_eight_columns_leave_the_cell_text_to_the_hover(page, base):
    page.set_viewport_size({"width": 390, "height": 844})
    narrow = _open(page, f"{base}/runs/wide?lang=zh")
    assert narrow["cellText"] == 0 and narrow["overflow"] <= 0
    page.set_viewport_size({"width": 1440, "height": 1000})
    assert _open(page, f"{base}/runs/wide?lang=en")["cellText"] == 8


def test_a_3d_runs_hints_are_unchanged(page, base):
    page.set_viewport_size({"width": 1440, "height": 1000})
    got = _open(page, f"{base}/runs/plain?lang=en")
    assert "grouped by (dp, pp, tp)." in got["timeline"]
    assert "columns (dp, tp) pairs" in got["grid"] and "its DP × TP peers" in got["grid"]
    assert "TP and DP collectives, and host time" in got["where"]
    assert got["note"] == "" and got["squares"] == 4  # tp 2 x pp 2
    assert "CP" not in got["advice"]


def test_a_cp_heavy_run_is_advised_on_its_ring_in_each_language(page, base):
    page.set_viewport_size({"width": 1440, "height": 1000})
    _open(page, f"{base}/runs/heavycp?lang=en")
    en = page.locator('#advice li[data-rule="cp_comm"]').inner_text()
    assert re.search(r"CP's ring exchange of K/V blocks is \d+% of the step", en), en
    assert "fewer CP ranks (now 2)" in en
    page.set_viewport_size({"width": 390, "height": 844})
    _open(page, f"{base}/runs/heavycp?lang=zh")
    zh = page.locator('#advice li[data-rule="cp_comm"]').inner_text()
    assert re.search(r"CP 环上的 K/V 交换占单步 \d+%", zh) and "当前 2" in zh, zh
