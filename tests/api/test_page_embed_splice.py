"""A big view model goes into its page as the cache's own bytes (page_data.json_for_script,
scenario_cache.ViewModel), not encoded again: that one json.dumps held the GIL, and /healthz
with it, for up to 2 s under bench_heavy's pages. The page's JSON must still be what it was:
the same data, nothing that closes its <script> element, and the model byte for byte the
API's answer."""

import json

from app.api import page_head, scenario_cache
from app.api.page_data import json_for_script
from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario


def page(model):
    return {"page": "overview", "model": model, "extra": {"orders": []},
            "state": {"lang": "zh", "note": "</script><b>"}, "errors": {}}  # fmt: skip


def test_a_spliced_model_reads_back_as_the_page_data_with_nothing_unescaped():
    model = {"scenario": {"model": "</script><b>x"}, "values": [1.5, 2, None], "名": "值"}
    raw = json.dumps(model, separators=(",", ":")).encode()
    spliced = json_for_script(page(scenario_cache.ViewModel(model, raw)))
    plain = json_for_script(page(dict(model)))
    assert "</script" not in spliced and "<" not in spliced
    assert json.loads(spliced) == json.loads(plain) == page(model)


def test_the_model_in_the_page_is_the_api_bytes_of_a_big_entry(monkeypatch):
    monkeypatch.setattr(scenario_cache, "PARSE_WHOLE_BYTES", 0)  # every entry a ViewModel
    scenario = Scenario.model_validate({"schedule": "interleaved", "virtual_stages": 2, "pp": 4})
    cache = scenario_cache.ScenarioCache(1 << 24, "t")
    model = cache.model(scenario)
    body = cache.entry(scenario).body
    assert isinstance(model, scenario_cache.ViewModel) and model.raw == body
    assert model == json.loads(json.dumps(evaluate(scenario)))
    text = json_for_script(page(model))
    assert body.decode().replace("<", "\\u003c") in text  # spliced whole, not re-encoded
    assert json.loads(text)["model"] == json.loads(body)


def test_a_page_reads_a_big_models_head_and_embeds_its_whole_body(monkeypatch):
    """The overview's server side reads the layout and the schedule's counts, never an event:
    it parses only the head (page_head.py), and the page still gets every event."""
    monkeypatch.setattr(page_head, "HEAD_FROM_BYTES", 0)  # every entry keeps a head
    monkeypatch.setattr(scenario_cache, "PARSE_WHOLE_BYTES", 0)
    scenario = Scenario.model_validate({"schedule": "interleaved", "virtual_stages": 2, "pp": 4})
    cache = scenario_cache.ScenarioCache(1 << 24, "t")
    whole = json.loads(json.dumps(evaluate(scenario)))
    head = cache.model(scenario, head=True)
    assert "events" not in head["timeline"] and "actions" not in head["schedule"]
    assert head["layout"] == whole["layout"]
    assert head["timeline"]["bubble_fraction"] == whole["timeline"]["bubble_fraction"]
    assert json.loads(json_for_script(page(head)))["model"] == whole
    assert cache.model(scenario) == whole  # without head=, the whole model as before


def test_a_worker_answer_carries_the_head_after_a_newline(monkeypatch):
    monkeypatch.setattr(page_head, "HEAD_FROM_BYTES", 0)
    model = {"layout": {"world": 8}, "timeline": {"events": [[1, 2]] * 3, "bubble": 0.1},
             "schedule": {"actions": ["F0"], "microbatches": 4}, "note": "a\nb"}  # fmt: skip
    body, head = page_head.split(b"".join(page_head.pieces_with_head(model)))
    assert json.loads(body) == model and b"\n" not in body
    assert json.loads(head) == {"layout": {"world": 8}, "timeline": {"bubble": 0.1},
                                "schedule": {"microbatches": 4}, "note": "a\nb"}  # fmt: skip
    monkeypatch.setattr(page_head, "HEAD_FROM_BYTES", 1 << 20)
    assert page_head.split(b"".join(page_head.pieces_with_head(model)))[1] is None
