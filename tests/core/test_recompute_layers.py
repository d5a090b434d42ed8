"""recompute_layers (Megatron --recompute-method block --recompute-num-layers): only that many
layers of each chunk are recomputed; time, FLOPs, memory and TP bytes follow the count."""

import pytest

from app.core.cost import flops
from app.core.evaluate import evaluate, prepare
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import model_of
from app.core.inputs.training import Training

# 32 layers on pp=2: 16 per chunk; TP 2 so the recompute's collectives count too.
BASE = dict(model="llama3-8b", dp=2, tp=2, pp=2, microbatches=4, hardware="a100-80g")


def view(**kw) -> dict:
    return evaluate(Scenario(**{**BASE, **kw}))


def peak_activations(**kw) -> float:
    """Stage 0's activations: the most micro-batches in flight, and no head's logits."""
    stages = prepare(Scenario(**{**BASE, **kw}))[2].sections["memory"]["per_stage"]
    return stages[0]["activations_bytes"]


def test_all_layers_is_full_recompute_and_none_is_no_recompute():
    full, every = view(recompute="full"), view(recompute="full", recompute_layers=16)
    none, zero = view(recompute="none"), view(recompute="full", recompute_layers=0)
    assert every["step_time_s"] == pytest.approx(full["step_time_s"])
    assert zero["step_time_s"] == pytest.approx(none["step_time_s"])
    assert every["compute"] == {**full["compute"], "recompute_layers": 16}
    assert full["compute"]["recomputed_layers"] == 32 and none["compute"]["recomputed_layers"] == 0
    assert zero["compute"]["hardware_flops_per_iteration"] == pytest.approx(
        none["compute"]["hardware_flops_per_iteration"]
    )
    assert peak_activations(recompute="full", recompute_layers=0) == pytest.approx(
        peak_activations(recompute="none")
    )


def test_time_flops_and_tp_bytes_grow_by_one_layer_forward_per_recomputed_layer():
    m = model_of(Scenario(**BASE))
    tokens = BASE["dp"] * BASE["microbatches"] * m.seq_len  # micro-batch size 1
    runs = [view(recompute="full", recompute_layers=k) for k in (0, 4, 8, 16)]
    hw = [r["compute"]["hardware_flops_per_iteration"] for r in runs]
    per_layer = flops.forward_flops_per_layer(m, tokens)
    # Two chunks (pp=2) of 16 layers: k per chunk recomputed, 2k in the model.
    for k, f in zip((4, 8, 16), hw[1:], strict=True):
        assert f - hw[0] == pytest.approx(2 * k * per_layer)
    steps = [r["step_time_s"] for r in runs]
    assert steps == sorted(steps) and steps[0] < steps[-1]
    tp = [r["comm"]["tp_bytes"] for r in runs]
    # TP bytes per layer pass are constant: 2 passes per layer plus one per recomputed layer.
    assert (tp[2] - tp[0]) == pytest.approx((tp[3] - tp[0]) / 2)
    assert tp[3] == pytest.approx(tp[0] * 3 / 2)


def test_fewer_recomputed_layers_hold_more_activations():
    held = [peak_activations(recompute="full", recompute_layers=k) for k in (16, 8, 0)]
    assert held[0] < held[1] < held[2]
    # Linear in the kept layers: halfway in count is halfway in bytes.
    assert held[1] == pytest.approx((held[0] + held[2]) / 2)


def test_a_count_above_the_chunk_means_every_layer():
    assert view(recompute="full", recompute_layers=500)["step_time_s"] == pytest.approx(
        view(recompute="full")["step_time_s"]
    )
    assert Training(recompute="full", recompute_layers=3).recomputed(2) == 2


def test_recompute_layers_without_full_recompute_is_refused_naming_the_field():
    with pytest.raises(ScenarioError) as exc:
        view(recompute="selective", recompute_layers=4)
    assert exc.value.field == "recompute_layers" and "recompute=full" in exc.value.reason


@pytest.mark.parametrize("bad", ["-1", "abc", "1.5", "100000"])
def test_bad_recompute_layers_are_a_422_naming_the_field(client, bad):
    r = client.get(f"/api/scenario?recompute=full&recompute_layers={bad}")
    assert r.status_code == 422
    assert any(d["loc"][-1] == "recompute_layers" for d in r.json()["detail"]), r.text


def test_the_api_takes_it_from_the_query_and_shows_it(client):
    r = client.get("/api/scenario?model=llama3-8b&recompute=full&recompute_layers=4&pp=2")
    assert r.status_code == 200, r.text
    assert r.json()["compute"]["recompute_layers"] == 4
    assert r.json()["compute"]["recomputed_layers"] == 8
    r = client.get("/api/scenario?recompute=selective&recompute_layers=4")
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["query", "recompute_layers"]
