"""cp and ep over HTTP: the CP ring and EP group in the layout JSON, the 422s naming the
field and the rule (en reason, zh from the catalogue), and the 3D results unchanged when
cp = ep = 1 are given explicitly."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import i18n
from tests.page_html import page_data

ZH = i18n.strings("zh")
MOE = "model=mixtral-8x7b"  # ep needs experts to split (scenario.ep_dense)


def test_cp_and_ep_appear_in_the_layout_only_when_used(client):
    flat = client.get("/api/scenario?dp=2&tp=2&pp=2").json()["layout"]
    assert set(flat["sizes"]) == {"dp", "pp", "tp"} and "full_order" not in flat
    assert set(flat["ranks"][0]) == {"rank", "dp", "pp", "tp", "node"}
    res = client.get(f"/api/scenario?{MOE}&dp=2&tp=2&pp=2&cp=2&ep=4&order=megatron-5d")
    assert res.status_code == 200, res.text
    lay = res.json()["layout"]
    assert lay["world_size"] == 16 and lay["sizes"]["cp"] == 2 and lay["sizes"]["ep"] == 4
    assert lay["order"] == "tp-cp-ep-dp-pp" and lay["full_order"] == "tp-cp-ep-dp-pp"
    assert [0, 2] in lay["groups"]["cp"]  # the CP ring of rank 0: cp stride = tp
    assert [0, 2, 4, 6] in lay["groups"]["ep"]  # ep folds over cp x dp (stride tp)
    assert lay["crosses_node"]["cp"] is False


def test_the_orders_table_permutes_cp_when_used(client):
    rows = client.get("/api/orders?dp=2&tp=2&pp=2&cp=2").json()["orders"]
    assert len(rows) == 24 and all("cp" in r["nodes_spanned"] for r in rows)


@pytest.mark.parametrize(
    ("query", "field", "key", "words"),
    [
        ("cp=3", "cp", "scenario.cp_chunks", "2*cp = 6 equal chunks"),  # llama3-8b: 8,192
        ("cp=2&seq_len=2050&layers=2&hidden=64&heads=4", "cp", "scenario.cp_chunks", "2050"),
        (f"{MOE}&dp=2&cp=1&ep=4&order=megatron-5d", "ep", "scenario.ep_divides", "2*1 = 2"),
        (f"{MOE}&dp=2&cp=2&ep=3&order=megatron-5d", "ep", "scenario.ep_divides", "ep = 3"),
        (f"{MOE}&dp=2&pp=2&ep=2", "ep", "scenario.ep_pipeline", "put pp last"),
        ("dp=2&cp=2&ep=2&order=megatron-5d", "ep", "scenario.ep_dense", "no experts"),
        ("dp=512&tp=8&pp=16&cp=2", "cp", "scenario.world_cp", "= 131072 > 65536"),
        ("cp=0", "cp", None, ""),
        ("ep=x", "ep", None, ""),
    ],
)
def test_bad_cp_or_ep_is_a_422_naming_the_field(client, query, field, key, words):
    res = client.get(f"/api/scenario?{query}")
    assert res.status_code == 422, res.text
    (detail,) = res.json()["detail"]
    assert detail["loc"] == ["query", field], detail
    assert words in detail["msg"]
    if key:
        assert detail["type"] == key
        zh = ZH[f"err.{key}"].format(**detail["ctx"])
        assert re.search(r"[\u4e00-\u9fff]", zh), zh


def test_the_chinese_page_words_the_cp_error_in_chinese(client):
    res = client.get("/?cp=3&lang=zh")
    assert res.status_code == 422
    assert "等长块" in page_data(res.text)["errors"]["cp"]


def _same_without_cp_ep(client, query: str) -> None:
    plain = client.get(f"/api/scenario?{query}")
    explicit = client.get(f"/api/scenario?{query}&cp=1&ep=1")
    assert plain.status_code == explicit.status_code
    if plain.status_code != 200:
        return
    a, b = plain.json(), explicit.json()
    assert a["query"] == b["query"]  # cp=1 and ep=1 are defaults: not in the share link
    for key in ("layout", "timeline", "memory", "breakdown", "summary"):
        assert a.get(key) == b.get(key), key
    assert a == b


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    dp=st.sampled_from([1, 2, 4]),
    tp=st.sampled_from([1, 2, 8]),
    pp=st.sampled_from([1, 2, 4]),
    order=st.sampled_from(["tp-pp-dp", "megatron", "pp-dp-tp", "megatron-5d"]),
    schedule=st.sampled_from(["1f1b", "gpipe", "interleaved"]),
)
def test_the_3d_results_are_unchanged_at_cp_ep_1(client, dp, tp, pp, order, schedule):
    q = f"dp={dp}&tp={tp}&pp={pp}&order={order}&schedule={schedule}&microbatches=8"
    if schedule == "interleaved":
        q += "&virtual_stages=2"
    _same_without_cp_ep(client, q)


def test_the_3d_page_is_unchanged_at_cp_ep_1(client):
    a = page_data(client.get("/?dp=2&tp=2&pp=2").text)
    b = page_data(client.get("/?dp=2&tp=2&pp=2&cp=1&ep=1").text)
    assert a["model"] == b["model"] and a["extra"] == b["extra"]
