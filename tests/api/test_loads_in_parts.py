"""json_chunks.loads_in_parts: the big view model parsed member by member, value for value
what json.loads gives, and refusing what json.loads refuses."""

from __future__ import annotations

import json

import pytest

from app.api import json_chunks, scenario_cache
from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario

VALUES = [
    {"a": [1, 2.5, None, True, "x"], "b": {"c": [[1, 2], [], {}], "d": {}}, "e": []},
    [{"k": [1, {"z": '中文 é "q" \\n'}]}, [], [[[[1]]]], -0.0, 1e300],
    {"deep": {"er": {"still": {"deeper": [1, [2, [3]]]}}}},
    "scalar",
    3,
    [],
    {},
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("spaced", [False, True])
def test_parts_equal_one_json_loads(value, spaced):
    text = json.dumps(value, indent=2 if spaced else None, ensure_ascii=False)
    assert json_chunks.loads_in_parts(text) == json.loads(text)
    assert json_chunks.loads_in_parts(text.encode()) == json.loads(text)


def test_a_character_split_across_decode_pieces_stays_whole(monkeypatch):
    monkeypatch.setattr(json_chunks, "PIECE_BYTES", 1)  # 16-byte pieces cut 3-byte characters
    text = json.dumps({"zh": ["流水线并行" * 7, "数据"]}, ensure_ascii=False)
    assert json_chunks.loads_in_parts(text.encode()) == json.loads(text)


@pytest.mark.parametrize("bad", ['{"a" 1}', "[1 2]", '{"a": 1', "[1,]", '{"a": 1} x', ""])
def test_malformed_json_is_refused_like_json_loads(bad):
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad)
    with pytest.raises(json.JSONDecodeError):
        json_chunks.loads_in_parts(bad)


def test_cache_model_of_a_big_entry_equals_evaluate(monkeypatch):
    monkeypatch.setattr(scenario_cache, "PARSE_WHOLE_BYTES", 0)  # every entry parsed in parts
    scenario = Scenario.model_validate({"schedule": "interleaved", "virtual_stages": 2, "pp": 4})
    cache = scenario_cache.ScenarioCache(1 << 24, "t")
    expected = json.loads(json.dumps(evaluate(scenario)))
    assert cache.model(scenario) == expected
