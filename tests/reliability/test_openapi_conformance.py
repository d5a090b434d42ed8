"""The OpenAPI document says what the server does (issue 26, item 15).

A client generated from /openapi.json must meet no surprise. Schemathesis drives every
documented operation in-process (ASGI; websockets are not in the document) with requests
the schema allows and requests it forbids, and checks each answer:

* its status is one the operation documents (``status_code_conformance``);
* its Content-Type is one the operation documents (``content_type_conformance``);
* its body matches the documented schema (``response_schema_conformance``);
* a request the schema allows is not refused as malformed (``positive_data_acceptance``),
  except by a rule no JSON Schema can state: one that ties two fields together, or a run
  that must exist (404, which the check allows). Those are listed in CROSS_FIELD, each
  with the reason a schema cannot say it;
* nothing answers 5xx (``not_a_server_error``).

Bounded: a few dozen examples per operation, no shrinking, deterministic (the same cases
on every run, so CI does not flake on a new random draw); the file takes about a minute
on two cores.
"""

from __future__ import annotations

import copy
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi import checks

from app.api import openapi_doc
from app.core.inputs.scenario_fields import MAX_LAYERS, parse_layer_list, parse_time_list
from app.core.layout.topology import parse_order
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(120)

# The Host schemathesis' ASGI client sends (schemathesis.python.asgi.HOST): allowed here as
# a proxy's name would be, so the Host check (app/api/hosts.py) lets the cases through.
TEST_HOST = "testserver"


def _app() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        db = Path(tempfile.mkdtemp(prefix="meshscope-conformance-")) / "c.sqlite3"
        settings_ = Settings(ingest_token="t" * 32, allowed_hosts=[TEST_HOST], db=db)
        return create_app(settings_)


APP = _app()


def _schema(phases: list[str]) -> Any:
    """The app's document, own config each (a clone would share it): both generation modes,
    the same cases on every run, no shrinking (a failure is reported as found)."""
    loaded = schemathesis.openapi.from_asgi("/openapi.json", APP)
    loaded.config.generation.update(
        modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], no_shrink=True, deterministic=True
    )
    loaded.config.phases.update(phases=phases)
    return loaded


# Every phase, coverage too (each parameter's bounds, empty and overlong strings...). The
# scenario's family (one model, a few parameters each of their own) gets it on /api/scenario
# alone, and the planner (seconds a request) none: both are fuzzed below, fewer times.
FULL = _schema(["examples", "coverage", "fuzzing"])
FUZZED = _schema(["examples", "fuzzing"])
FAMILY = r"^/api/(export|sweep|primer|flow|orders|trace)$"
PLANNER = r"^/api/plan$"

# 422 types (a detail's ``type``) a schema-valid request may still get: each is a rule
# between fields, or between a field and a quantity derived from others, which JSON Schema
# (one schema per parameter) cannot state. Any other 422 to a request the schema allows is
# a mismatch: its bound or pattern belongs in the schema (app/api/openapi_doc.py).
_SCENARIO = {
    "world": "dp*tp*pp within the world bound, each factor alone is not",
    "world_cp": "dp*tp*pp*cp within the world bound",
    "custom_missing": "model=custom (or a shape field) needs layers, hidden and heads",
    "heads_tp": "heads divisible by tp",
    "kv_heads_tp": "kv_heads divisible by tp",
    "heads_kv": "heads divisible by kv_heads",
    "hidden_heads": "hidden divisible by heads",
    "ffn_tp": "ffn_hidden divisible by tp",
    "seq_tp": "seq_len divisible by tp under sequence parallelism",
    "cp_chunks": "seq_len splits into 2*cp chunks",
    "ep_divides": "ep divides dp*cp",
    "ep_pipeline": "ep against the pipeline's shape",
    "layers_pp": "layers against pp",
    "layers_vs": "layers against pp*chunks",
    "stage_layers_length": "stage_layers has pp*chunks entries",
    "stage_layers_sum": "stage_layers sums to layers",
    "stage_layers_copies": "stage_layers against the schedule's copies",
    "time_length": "a time list has 1 or pp entries",
    "time_length_vs": "a time list has 1, pp or pp*chunks entries",
    "fb_range": "fb_time between max(F, B+W) and F+B+W",
    "fb_needs_f": "fb_time needs f_time",
    "hbm_floor": "hbm_gib above the hardware's memory floor",
    "recompute_layers_full": "recompute_layers needs recompute=full",
    "selective_ac": "selective_ac needs recompute=selective",
    "tp_overlap_sp": "tp_comm_overlap needs sequence_parallel",
    "too_large": "pp*microbatches*chunks within the simulation bound",
    "fp8_needs_recipe": "fp8_scaling or fp8_param_gather against fp8",
    "fp8_scaling_tensorwise": "fp8_scaling=current against the fp8 recipe",
    "fp8_hardware": "an fp8 recipe against the hardware",
    "mxfp8_hardware": "fp8=mxfp8 against the hardware",
    "cp_ulysses": "cp_comm=a2a against heads, kv_heads, tp and cp",
    "dp_shard_zero3": "dp_shard against zero",
    "dp_shard_divides": "dp_shard divides dp",
    "etp_divides": "etp*ep divides tp*cp*dp (the expert grid)",
    "etp_sp": "etp other than tp needs sequence_parallel",
    "expert_ffn_etp": "expert_ffn divisible by etp",
    "expert_ffn_tp": "expert_ffn divisible by tp",
    "top_k_experts": "top_k between 1 and experts",
    "ep_experts": "ep divides experts",
    "ep_dense": "ep > 1 or etp other than tp only with experts",
    "moe_layers": "first_dense_layers and moe_every leave a layer for the experts",
    "routing_imbalance": "routing_imbalance within experts/top_k",
}
_SCHEDULE = {
    "one_chunk": "virtual_stages against the schedule",
    "multi_chunk": "virtual_stages against the schedule",
    "v_shape": "virtual_stages against the schedule",
    "rounds": "microbatches against pp for the schedule",
    "dualpipe_m": "microbatches against pp for DualPipe",
    "dualpipe_pp": "pp even for DualPipe",
    "dualpipev_m": "microbatches against pp for DualPipeV",
    "positive": "the schedule's own counts",
}
_SWEEP = {
    "global_batch": "the global batch against dp*micro_batch_size",
    "stop_start": "stop against start",
    "series_empty": "series needs series_values",
    "same_field": "series and knob differ",
    "schedule_unknown": "series_values are schedule names when series=schedule",
    "not_whole": "values are whole numbers unless knob=schedule",
    "range_count": "values in start..stop by step",
    "values_count": "values against the knob's bound",
    "lines_count": "series_values against the bound",
    "points": "values x lines",
    "slots": "the sweep's simulated work",
    "non_finite": "the cost model's answer for the whole combination",
}
CROSS_FIELD = {
    **{f"scenario.{k}": v for k, v in _SCENARIO.items()},
    **{f"schedule.{k}": v for k, v in _SCHEDULE.items()},
    **{f"sweep.{k}": v for k, v in _SWEEP.items()},
    "model.kv_heads": "kv_heads against heads",
    "plan.pool_bound": "gpus x global_batch candidates within the planner's bound",
    "compare.either": "s or preset, not both",
    "compare.repeated": "the same scenario twice",
    "primer.step_past": "step within the ring the group and rank give",
    "page.rank_outside": "rank within the world dp*tp*pp",
    "quiz.twice": "one question answered twice in the list",
    "actions.first_after_last": "first <= last (a run's step range)",
    "actions.past_end": "last within the run's steps (a stored run's own count)",
}
# A model validator's plain value_error on a field tied to another one.
TIED_FIELDS = {
    ("body", "nvlink_domain"): "0 or a multiple of gpus_per_node",
    ("body", "memory_floor_gib"): "below hbm_gib",
}


def _allowed(label: str, detail: dict[str, Any]) -> bool:
    loc, kind = list(detail.get("loc", [])), str(detail.get("type"))
    if kind in CROSS_FIELD or (kind == "value_error" and tuple(loc) in TIED_FIELDS):
        return True
    if label == "GET /api/compare" and loc[:2] == ["query", "s"] and len(loc) > 2:
        return True  # a member: a scenario's query inside one string, checked as /api/scenario
    # Hugging Face's config.json: the document states its outline (a supported architecture);
    # the keys each architecture reads are Hugging Face's, not this server's to schema.
    hf = label == "POST /api/model/from-hf-config"
    return hf and len(loc) == 2 and loc[0] == "body" and loc[1] != "architectures"


def _details(response: Any) -> list[dict[str, Any]]:
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        return []
    return [d for d in detail if isinstance(d, dict)] if isinstance(detail, list) else []


def schema_valid_is_accepted(ctx: Any, response: Any, case: Any) -> bool | None:
    """positive_data_acceptance, less the 422s of rules no schema can state (above)."""
    details = _details(response) if response.status_code == 422 else []
    if details and all(_allowed(case.operation.label, d) for d in details):
        return None
    return checks.positive_data_acceptance(ctx, response, case)


CHECKS = [
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    schema_valid_is_accepted,
    not_a_server_error,
]


BOUNDED = {"deadline": None, "derandomize": True, "database": None}


@FULL.exclude(path_regex=f"{FAMILY}|{PLANNER}").parametrize()
@settings(max_examples=20, suppress_health_check=list(HealthCheck), **BOUNDED)
def test_every_answer_is_documented(case: Any) -> None:
    case.call_and_validate(checks=CHECKS)


@FUZZED.include(path_regex=FAMILY).parametrize()
@settings(max_examples=15, suppress_health_check=list(HealthCheck), **BOUNDED)
def test_the_scenario_family_answers_as_documented(case: Any) -> None:
    case.call_and_validate(checks=CHECKS)


@FUZZED.include(path_regex=PLANNER).parametrize()
@settings(max_examples=6, suppress_health_check=list(HealthCheck), **BOUNDED)
def test_the_planner_answers_as_documented(case: Any) -> None:
    case.call_and_validate(checks=CHECKS)


# --- the hardware profile's body is typed as the schema says -----------------------------

PROFILE = {
    "name": "conformance-gpu",
    "peak_tflops": 989.0,
    "hbm_gib": 80.0,
    "hbm_tbps": 3.35,
    "intra_gbps": 450.0,
    "inter_gbps": 50.0,
    "source": "a test",
}
# One field at a time given a JSON type the schema does not allow: a string for a number,
# a number for a string, a boolean for a number, a string for an integer.
WRONG_TYPES = [
    ("peak_tflops", "989"),
    ("gpus_per_node", "8"),
    ("nics_per_node", True),
    ("name", 7),
    ("source", 1.5),
    ("hbm_gib", False),
]


@pytest.fixture(scope="module")
def client() -> Any:
    with TestClient(_app(), base_url=f"http://{TEST_HOST}") as c:
        yield c


@pytest.mark.parametrize(("field", "value"), WRONG_TYPES)
def test_a_wrongly_typed_profile_field_is_refused(client: Any, field: str, value: Any) -> None:
    body = {**PROFILE, field: value}
    r = client.post("/api/hardware/validate", json=body)
    assert r.status_code == 422, r.text
    assert [d["loc"] for d in r.json()["detail"]] == [["body", field]]


def test_a_wrongly_typed_efficiency_constant_is_refused(client: Any) -> None:
    efficiency = next(
        iter(APP.openapi()["components"]["schemas"]["EfficiencyProfile"]["properties"])
    )
    body = copy.deepcopy(PROFILE) | {"efficiency": {efficiency: "0.5"}}
    r = client.post("/api/hardware/validate", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "efficiency", efficiency]


def test_a_well_typed_profile_is_accepted(client: Any) -> None:
    # JSON Schema's integer is a number without a fraction: 8.0 is one, as 8 is.
    r = client.post("/api/hardware/validate", json=PROFILE | {"gpus_per_node": 8.0})
    assert r.status_code == 200, r.text
    assert r.json()["gpus_per_node"] == 8


def test_metrics_is_documented_as_text(client: Any) -> None:
    doc = client.get("/openapi.json").json()
    content = doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"]
    assert list(content) == ["text/plain"]
    assert client.get("/metrics").headers["content-type"].startswith("text/plain")


def test_the_list_patterns_are_the_parsers_bounds() -> None:
    # Each edge on both sides: what the pattern admits, the parser takes, and vice versa.
    layers = openapi_doc._list(openapi_doc.LAYER_ENTRY, MAX_LAYERS)
    assert re.fullmatch(layers, ",".join(["1024"] * MAX_LAYERS))
    assert parse_layer_list(",".join(["1024"] * MAX_LAYERS))
    for refused in ("0", "1025", "", ",".join(["1"] * (MAX_LAYERS + 1))):
        assert not re.fullmatch(layers, refused), refused
    f_time = openapi_doc._list(openapi_doc.POSITIVE_TIME_ENTRY, MAX_LAYERS)
    for taken in ("0.000001", ".000001", "999999.999999", "1,2.5,3"):
        assert re.fullmatch(f_time, taken) and parse_time_list(taken, 1e-6), taken
    for refused in ("0", "0.0000001", "", "1e3", "1000001"):
        assert not re.fullmatch(f_time, refused), refused
    assert all(parse_order(order) for order in openapi_doc.orders())
