"""The run page's static hints follow the run's mesh (issue 25): a CP run's timeline rows are
grouped by (dp, pp, cp, tp) and its grid's columns are (dp, cp, tp); an EP-only run keeps the
3D grid (EP adds no ranks) but its bubble hint names EP's all-to-all; the advice hint says
the rules read its CP and EP time; a 3D run's hints are as before. In English and zh."""

from __future__ import annotations

import html
import re

import pytest
from cp_ep_support import cp_ep_info, cp_ep_records
from test_metrics import make_client, seed


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with make_client(tmp_path_factory.mktemp("hints")) as c:
        for name, cp, ep in (("cp", 2, 1), ("ep", 1, 2), ("both", 2, 2)):
            info = cp_ep_info(name, dp=2, tp=1, pp=2, cp=cp, ep=ep, steps=2)
            ops = [("hello", (info, 0, 0, 1.0))]
            ops += [("record", (r, 1.0)) for r in cp_ep_records(info, 0)]
            c.app.state.live.store.transaction(ops)
        seed(c, "flat", at=1.0, steps=1, dp=2, tp=2, pp=2)
        yield c


def _page(client, run: str, lang: str = "en") -> str:
    """The page's drawn hints: its text less the embedded data, which holds every string."""
    r = client.get(f"/runs/{run}?lang={lang}", headers={"Host": "127.0.0.1"})
    assert r.status_code == 200
    hints = re.findall(r'<p class="hint"[^>]*>(.*?)</p>', r.text, re.S)
    return html.unescape(" ".join(hints))


@pytest.mark.parametrize(
    ("run", "rows", "cols", "where"),
    [("cp", "(dp, pp, cp, tp)", "(dp, cp, tp) triples", "TP, CP and DP collectives, and host"),
     ("ep", "(dp, pp, tp).", "(dp, tp) pairs", "TP and DP collectives, EP's all-to-all"),
     ("both", "(dp, pp, cp, tp)", "(dp, cp, tp) triples", "TP, CP and DP collectives, EP's"),
     ("flat", "(dp, pp, tp).", "(dp, tp) pairs", "TP and DP collectives, and host time")],
)  # fmt: skip
def test_each_hint_names_the_runs_own_mesh(client, run, rows, cols, where):
    text = _page(client, run)
    assert f"grouped by {rows}" in text and f"columns {cols}" in text and where in text
    assert ("measured TP, CP, EP, DP and pipeline-wait" in text) == (run != "flat")
    assert ("measured TP, DP and pipeline-wait" in text) == (run == "flat")


def test_the_hints_in_zh(client):
    text = _page(client, "both", "zh")
    assert "按 (dp, pp, cp, tp) 分组" in text and "列是 (dp, cp, tp) 组合" in text
    assert "TP、CP 与 DP 集合通信、EP 的 All-to-All" in text and "实测的 TP、CP、EP、DP" in text
    flat = _page(client, "flat", "zh")
    assert "按 (dp, pp, tp) 分组" in flat and "列是 (dp, tp) 组合" in flat
