"""Mixture of experts over HTTP (issue 27): a MoE preset evaluates with ep, and each bad MoE
input is a 422 naming the field and the rule (en reason, zh from the catalogue)."""

from __future__ import annotations

import re

import pytest

from app import i18n

ZH = i18n.strings("zh")
MIX = "model=mixtral-8x7b&order=megatron-5d&pp=1&tp=1&microbatches=2"


def test_a_moe_preset_evaluates_with_ep(client):
    res = client.get(f"/api/scenario?{MIX}&dp=8&ep=8")
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["layout"]["sizes"]["ep"] == 8
    assert body["compute"]["params_total"] == 46_702_796_800


@pytest.mark.parametrize(
    ("query", "field", "key", "words"),
    [
        (f"{MIX}&dp=8&top_k=9", "top_k", "scenario.top_k_experts", "experts (8)"),
        (f"{MIX}&dp=6&ep=3", "ep", "scenario.ep_experts", "ep (3) must divide experts (8)"),
        (f"{MIX}&dp=8&routing_imbalance=5", "routing_imbalance", "scenario.routing_imbalance",
         "experts/top_k = 4.0"),
    ],
)  # fmt: skip
def test_bad_moe_input_is_a_422_naming_the_field(client, query, field, key, words):
    res = client.get(f"/api/scenario?{query}")
    assert res.status_code == 422, res.text
    (detail,) = res.json()["detail"]
    assert detail["loc"] == ["query", field], detail
    assert words in detail["msg"]
    assert detail["type"] == key
    zh = ZH[f"err.{key}"].format(**detail["ctx"])
    assert re.search(r"[\u4e00-\u9fff]", zh), zh
