"""/api/hardware lists presets and loaded profiles; /api/hardware/validate answers 200 or 422;
a bad profile file stops the server from being built."""

import json
import tempfile
import warnings
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

from app import cli
from app.api.hardware import HardwareProfileFileError
from app.core.inputs.hardware import HARDWARE, Efficiency
from app.main import create_app
from app.settings import Settings

PROFILE = {
    "name": "lab-h100",
    "peak_tflops": 989,
    "hbm_gib": 80,
    "hbm_tbps": 3.35,
    "intra_gbps": 450,
    "inter_gbps": 25,
    "nics_per_node": 4,
    "source": "our lab: DGX H100 with 4 of its 8 NICs cabled",
}


@pytest.fixture
def profile_file(tmp_path):
    path = tmp_path / "lab-h100.json"
    path.write_text(json.dumps(PROFILE))
    return path


def _settings(tmp_path, **more) -> Settings:
    return Settings(db=tmp_path / "m.sqlite3", ingest_token="t" * 32, **more)


def _locs(response) -> list[list]:
    assert response.status_code == 422, response.text
    return [d["loc"] for d in response.json()["detail"]]


def test_the_list_has_every_built_in_with_its_figures_and_source(client):
    body = client.get("/api/hardware").json()["hardware"]
    assert [h["name"] for h in body] == list(HARDWARE)
    for entry in body:
        spec = HARDWARE[entry["name"]]
        assert entry["kind"] == "builtin"
        assert entry["source"] == spec.source and "datasheet" in entry["source"]
        assert (entry["peak_tflops"], entry["inter_gbps"]) == (spec.peak_tflops, spec.inter_gbps)
        assert entry["domain_size"] == spec.domain_size
        assert entry["efficiency"]["gemm_max_fraction"] == spec.efficiency.gemm_max_fraction
    nvl72 = next(h for h in body if h["name"] == "gb200-nvl72")
    assert (nvl72["gpus_per_node"], nvl72["nvlink_domain"], nvl72["domain_size"]) == (4, 72, 72)


def test_a_valid_profile_comes_back_normalized(client):
    response = client.post("/api/hardware/validate", json=PROFILE | {"name": " lab-h100 "})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["name"] == "lab-h100"
    assert (body["gpus_per_node"], body["nvlink_domain"]) == (8, 0)  # defaults filled in
    # A profile that gives no efficiency gets the generic defaults, not a preset's fitted set.
    assert body["efficiency"]["hbm_fraction"] == Efficiency().hbm_fraction


@pytest.mark.parametrize(
    "change,loc",
    [
        ({"peak_tflops": -1}, ["body", "peak_tflops"]),
        ({"hbm_tbps": 3350}, ["body", "hbm_tbps"]),
        ({"nvlink_domain": 12}, ["body", "nvlink_domain"]),
        ({"name": "Lab H100"}, ["body", "name"]),
        ({"turbo": True}, ["body", "turbo"]),
        ({"efficiency": {"hbm_fraction": 1.5}}, ["body", "efficiency", "hbm_fraction"]),
        ({"efficiency": {"magic": 1}}, ["body", "efficiency", "magic"]),
    ],
)
def test_a_bad_profile_is_a_422_naming_the_field(client, change, loc):
    assert _locs(client.post("/api/hardware/validate", json=PROFILE | change)) == [loc]


def test_a_missing_field_is_named(client):
    body = {k: v for k, v in PROFILE.items() if k != "source"}
    response = client.post("/api/hardware/validate", json=body)
    assert _locs(response) == [["body", "source"]]
    assert response.json()["detail"][0]["type"] == "missing"


@pytest.mark.parametrize("literal", ["NaN", "Infinity"])
def test_non_finite_numbers_are_a_422_not_a_500(client, literal):
    text = json.dumps(PROFILE).replace('"peak_tflops": 989', f'"peak_tflops": {literal}')
    response = client.post(
        "/api/hardware/validate", content=text, headers={"content-type": "application/json"}
    )
    assert _locs(response) == [["body", "peak_tflops"]]
    assert literal not in response.text  # the rejected value is never echoed


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"h100"', ""])
def test_a_body_that_is_not_a_profile_object_is_a_422(client, text):
    response = client.post(
        "/api/hardware/validate", content=text, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422, response.text


def test_a_built_in_name_is_refused_by_validate(client):
    response = client.post("/api/hardware/validate", json=PROFILE | {"name": "h100-sxm"})
    assert _locs(response) == [["body", "name"]]
    assert "built-in" in response.json()["detail"][0]["msg"]


def test_a_server_built_with_a_profile_file_lists_it(tmp_path, profile_file):
    app = create_app(_settings(tmp_path, hardware_profiles=[profile_file]))
    with TestClient(app) as client:
        body = client.get("/api/hardware").json()["hardware"]
        assert [h["name"] for h in body] == [*HARDWARE, "lab-h100"]
        mine = body[-1]
        assert mine["kind"] == "profile" and mine["source"] == PROFILE["source"]
        assert (mine["inter_gbps"], mine["nics_per_node"]) == (25, 4)
        # The loaded name is taken too: validating it again says so.
        response = client.post("/api/hardware/validate", json=PROFILE)
        assert _locs(response) == [["body", "name"]]
        assert "loaded profile" in response.json()["detail"][0]["msg"]
    assert app.state.hardware["lab-h100"].inter_gbps == 25


def test_profiles_come_from_the_environment_as_a_json_list(tmp_path, profile_file, monkeypatch):
    monkeypatch.setenv("MESHSCOPE_HARDWARE_PROFILES", json.dumps([str(profile_file)]))
    app = create_app(_settings(tmp_path))
    assert "lab-h100" in app.state.hardware


@pytest.mark.parametrize(
    "content,words",
    [
        (json.dumps(PROFILE | {"peak_tflops": 0}), ["peak_tflops", "greater than 0"]),
        (json.dumps({k: v for k, v in PROFILE.items() if k != "hbm_gib"}), ["hbm_gib"]),
        (json.dumps(PROFILE | {"turbo": 1}), ["turbo", "Extra inputs"]),
        (json.dumps(PROFILE | {"name": "h200"}), ["name", "'h200'", "already"]),
        ("{not json", ["Invalid JSON"]),
    ],
)
def test_a_malformed_file_stops_create_app_naming_file_and_field(tmp_path, content, words):
    path = tmp_path / "broken-profile.json"
    path.write_text(content)
    with pytest.raises(HardwareProfileFileError) as exc:
        create_app(_settings(tmp_path, hardware_profiles=[path]))
    message = str(exc.value)
    assert "\n" not in message and str(path) in message
    assert all(w in message for w in words), message


def test_a_missing_file_stops_create_app(tmp_path):
    path = tmp_path / "nowhere.json"
    with pytest.raises(HardwareProfileFileError, match="nowhere.json: cannot be read"):
        create_app(_settings(tmp_path, hardware_profiles=[path]))


def test_two_files_with_one_name_stop_create_app_naming_both(tmp_path, profile_file):
    again = tmp_path / "again.json"
    again.write_text(json.dumps(PROFILE | {"peak_tflops": 1}))
    with pytest.raises(HardwareProfileFileError) as exc:
        create_app(_settings(tmp_path, hardware_profiles=[profile_file, again]))
    assert str(again) in str(exc.value) and str(profile_file) in str(exc.value)


def test_serve_loads_every_hardware_profile_flag(tmp_path, profile_file, monkeypatch):
    other = tmp_path / "other.json"
    other.write_text(json.dumps(PROFILE | {"name": "lab-mi300x"}))
    served = {}
    monkeypatch.setattr("uvicorn.run", lambda app, **kw: served.setdefault("app", app))
    monkeypatch.chdir(tmp_path)
    argv = ["serve", "--hardware-profile", str(profile_file), "--hardware-profile", str(other)]
    assert cli.main(argv) == 0
    assert list(served["app"].state.hardware)[-2:] == ["lab-h100", "lab-mi300x"]


def test_serve_with_a_bad_profile_prints_one_line_and_never_serves(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(PROFILE | {"hbm_gib": -80}))
    monkeypatch.setattr("uvicorn.run", lambda *a, **kw: pytest.fail("the server started"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["serve", "--hardware-profile", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and "hbm_gib" in err[0]


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _db = Path(tempfile.mkdtemp(prefix="meshscope-hw-fuzz-")) / "fuzz.sqlite3"
    _schema = schemathesis.openapi.from_asgi(
        "/openapi.json", create_app(Settings(ingest_token="t" * 32, db=_db))
    )


@_schema.include(path_regex="^/api/hardware").parametrize()
@hypothesis_settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_profile_makes_a_server_error(case):
    response = case.call(timeout=30)
    assert response.status_code < 500, response.text
    if case.method.upper() == case.operation.method.upper():  # others probe for a 405
        # FastAPI answers 400 to a body that is not UTF-8 text before any field is read.
        assert response.status_code in (200, 400, 422), case.as_curl_command()
