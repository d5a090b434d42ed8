"""The planner's result table words its recompute and FP8 choices in the page's language, as
the form's dropdowns do: a zh table said "selective" and "FP8 tensorwise"."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ZH = {k: v for sec in json.loads((ROOT / "app/i18n/locales/zh.json").read_text()).values()
      for k, v in sec.items()}  # fmt: skip
PLAN = "/plan?model=llama3-8b&hardware=h100-sxm&gpus=16&global_batch=64&fp8=tensorwise"


def _cells(html: str, label: str) -> list[str]:
    return re.findall(rf'<td data-label="{re.escape(label)}"><span>([^<]*)<', html)


def test_the_zh_plan_table_words_recompute_and_fp8(client):
    zh = client.get(PLAN + "&lang=zh").text
    cells = _cells(zh, ZH["field.recompute"])
    assert cells and set(cells) <= {ZH[f"opt.recompute.{v}"] for v in ("none", "selective", "full")}
    tag = '<span class="knobs" data-axis="fp8">FP8 {}</span>'
    assert tag.format(ZH["opt.fp8.tensorwise"]) in zh and tag.format("tensorwise") not in zh
    en = client.get(PLAN).text
    assert set(_cells(en, "activation recompute")) <= {"none", "selective", "full"}
    assert tag.format("tensorwise") in en
