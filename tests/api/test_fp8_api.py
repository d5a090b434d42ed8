"""FP8 over HTTP: the recipe as a query parameter on the scenario API, the page and the export;
a 422 naming ``fp8`` on hardware without FP8 (en reason, zh from the catalogue); the MFU note
string in both catalogues."""

from __future__ import annotations

import re

import pytest

from app import i18n

ZH, EN = i18n.strings("zh"), i18n.strings("en")


def test_the_recipe_flows_from_the_url_to_the_prediction(client):
    base = client.get("/api/scenario?model=llama3-70b&tp=8&pp=4&dp=8&microbatches=32").json()
    res = client.get("/api/scenario?model=llama3-70b&tp=8&pp=4&dp=8&microbatches=32&fp8=blockwise")
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["compute"]["fp8"] == "blockwise" and base["compute"]["fp8"] == "none"
    assert body["step_time_s"] < base["step_time_s"]
    assert body["query"]["fp8"] == "blockwise"  # the share link keeps it


@pytest.mark.parametrize(
    ("query", "key", "words"),
    [
        ("hardware=a100-80g&fp8=tensorwise", "scenario.fp8_hardware", "no FP8 tensor cores"),
        ("hardware=h100-sxm&fp8=mxfp8", "scenario.mxfp8_hardware", "Blackwell"),
    ],
)
def test_fp8_on_hardware_without_it_is_a_422_naming_fp8(client, query, key, words):
    res = client.get(f"/api/scenario?{query}")
    assert res.status_code == 422, res.text
    (detail,) = res.json()["detail"]
    assert detail["loc"] == ["query", "fp8"], detail
    assert words in detail["msg"] and detail["type"] == key
    zh = ZH[f"err.{key}"].format(**detail["ctx"])
    assert re.search(r"[\u4e00-\u9fff]", zh), zh


def test_an_unknown_recipe_is_a_422_naming_fp8(client):
    res = client.get("/api/scenario?fp8=int8")
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"] == ["query", "fp8"]


def test_the_page_takes_the_recipe_and_the_export_spells_it(client):
    assert client.get("/?hardware=b200&fp8=mxfp8").status_code == 200
    assert client.get("/?hardware=a100-80g&fp8=tensorwise").status_code == 422
    ex = client.get("/api/export?format=megatron&fp8=tensorwise&fp8_scaling=current").json()
    assert ex["ok"] and "--fp8-recipe tensorwise" in ex["text"]
    refused = client.get("/api/export?format=torchtitan&fp8=blockwise").json()
    assert not refused["ok"] and refused["cannot"]["code"] == "torchtitan_fp8_blockwise"
    for lang in (EN, ZH):
        assert lang["export.cannot.torchtitan_fp8_blockwise"]


def test_the_mfu_note_is_in_both_catalogues():
    assert "bf16 peak" in EN["perf.mfu_fp8"] and "{recipe}" in EN["perf.mfu_fp8"]
    assert "bf16" in ZH["perf.mfu_fp8"] and re.search(r"[\u4e00-\u9fff]", ZH["perf.mfu_fp8"])
