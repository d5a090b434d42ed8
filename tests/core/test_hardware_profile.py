"""A hardware profile JSON becomes a HardwareSpec, or a ValidationError naming the field."""

import dataclasses
import json

import pytest
from pydantic import ValidationError

from app.core.inputs.hardware import HARDWARE, Efficiency, HardwareSpec
from app.core.inputs.hardware_profile import (
    EfficiencyProfile,
    HardwareProfile,
    ProfileError,
    parse_profile,
    profile_of,
    specs_registry,
)

MINIMAL = {
    "name": "my-h100",
    "peak_tflops": 989,
    "hbm_gib": 80,
    "hbm_tbps": 3.35,
    "intra_gbps": 450,
    "inter_gbps": 50,
    "source": "our cluster's DGX H100 nodes",
}
REQUIRED = ("name", "peak_tflops", "hbm_gib", "hbm_tbps", "intra_gbps", "inter_gbps", "source")


def _locs(exc: pytest.ExceptionInfo[ValidationError]) -> list[tuple]:
    return [e["loc"] for e in exc.value.errors()]


def _parse(**changes) -> HardwareProfile:
    return parse_profile(json.dumps(MINIMAL | changes))


@pytest.mark.parametrize("name", sorted(HARDWARE))
def test_every_preset_round_trips_through_json(name):
    profile = profile_of(HARDWARE[name])
    again = parse_profile(profile.model_dump_json())
    assert again == profile
    assert again.to_spec() == HARDWARE[name]


def test_a_minimal_profile_takes_a_dgx_node_and_default_efficiency():
    spec = _parse().to_spec()
    assert isinstance(spec, HardwareSpec)
    assert (spec.gpus_per_node, spec.nics_per_node, spec.domain_size) == (8, 8, 8)
    assert spec.efficiency == Efficiency()
    assert spec.source == MINIMAL["source"]


def test_efficiency_given_in_part_keeps_the_rest():
    spec = _parse(efficiency={"hbm_fraction": 0.7, "inter_latency_us": 20}).to_spec()
    expected = dataclasses.replace(Efficiency(), hbm_fraction=0.7, inter_latency_us=20.0)
    assert spec.efficiency == expected


def test_the_efficiency_object_has_exactly_efficiencys_constants():
    assert set(EfficiencyProfile.model_fields) == {f.name for f in dataclasses.fields(Efficiency)}


def test_a_rack_scale_domain_of_whole_trays():
    spec = _parse(gpus_per_node=4, nics_per_node=4, nvlink_domain=72).to_spec()
    assert (spec.gpus_per_node, spec.domain_size) == (4, 72)


def test_text_is_trimmed_when_normalized():
    profile = _parse(name="  my-h100 ", source=" measured \n")
    assert (profile.name, profile.source) == ("my-h100", "measured")


@pytest.mark.parametrize("field", REQUIRED)
def test_a_missing_field_is_named(field):
    data = {k: v for k, v in MINIMAL.items() if k != field}
    with pytest.raises(ValidationError) as exc:
        parse_profile(json.dumps(data))
    assert exc.value.errors()[0]["type"] == "missing"
    assert _locs(exc) == [(field,)]


@pytest.mark.parametrize(
    "data,loc",
    [
        ({"nvlink_gbps": 900}, ("nvlink_gbps",)),
        ({"efficiency": {"sol_fraction": 0.5}}, ("efficiency", "sol_fraction")),
    ],
)
def test_an_unknown_field_is_named(data, loc):
    with pytest.raises(ValidationError) as exc:
        _parse(**data)
    assert exc.value.errors()[0]["type"] == "extra_forbidden"
    assert _locs(exc) == [loc]


@pytest.mark.parametrize(
    "field,value",
    [
        ("peak_tflops", 0),
        ("peak_tflops", -989),
        ("peak_tflops", 1e6),  # PFLOP/s typed as TFLOP/s
        ("hbm_gib", 0),
        ("hbm_tbps", 3350),  # GB/s typed as TB/s
        ("intra_gbps", 0),
        ("inter_gbps", 1e6),
        ("gpus_per_node", 0),
        ("gpus_per_node", 2.5),
        ("nics_per_node", 0),
        ("nvlink_domain", -1),
        ("nvlink_domain", 12),  # not whole 8-GPU nodes
        ("name", "H100 SXM"),
        ("name", "../h100"),
        ("name", ""),
        ("name", "x" * 65),
        ("source", "   "),
        ("peak_tflops", "fast"),
    ],
)
def test_an_out_of_bounds_figure_is_named(field, value):
    with pytest.raises(ValidationError) as exc:
        _parse(**{field: value})
    assert _locs(exc) == [(field,)]


@pytest.mark.parametrize(
    "field,value",
    [
        ("gemm_max_fraction", 1.2),  # above peak
        ("hbm_fraction", 0),
        ("intra_busbw_fraction", 2.5),
        ("inter_latency_us", -1),
        ("gemm_half_gflop", 0),
    ],
)
def test_an_out_of_bounds_efficiency_is_named(field, value):
    with pytest.raises(ValidationError) as exc:
        _parse(efficiency={field: value})
    assert _locs(exc) == [("efficiency", field)]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_json_numbers_are_refused(literal):
    text = json.dumps(MINIMAL).replace('"peak_tflops": 989', f'"peak_tflops": {literal}')
    with pytest.raises(ValidationError) as exc:
        parse_profile(text)
    assert _locs(exc) == [("peak_tflops",)]


def test_every_wrong_field_is_reported_at_once():
    with pytest.raises(ValidationError) as exc:
        _parse(peak_tflops=-1, hbm_gib=0, turbo=True)
    assert sorted(_locs(exc)) == [("hbm_gib",), ("peak_tflops",), ("turbo",)]


def test_text_that_is_not_json_is_a_validation_error():
    with pytest.raises(ValidationError) as exc:
        parse_profile("{name: my-h100")
    assert exc.value.errors()[0]["type"] == "json_invalid"


def test_a_profile_is_frozen():
    with pytest.raises(ValidationError):
        _parse().peak_tflops = 1.0  # type: ignore[misc]


def test_the_registry_puts_profiles_after_the_presets_and_is_read_only():
    mine = _parse().to_spec()
    registry = specs_registry({mine.name: mine})
    assert list(registry) == [*HARDWARE, "my-h100"]
    assert registry["h100-sxm"] is HARDWARE["h100-sxm"] and registry["my-h100"] == mine
    with pytest.raises(TypeError):
        registry["other"] = mine  # type: ignore[index]
    assert "my-h100" not in HARDWARE


@pytest.mark.parametrize("name", sorted(HARDWARE))
def test_a_profile_may_not_shadow_a_built_in(name):
    shadow = _parse(name=name, peak_tflops=1).to_spec()
    with pytest.raises(ProfileError) as exc:
        specs_registry({name: shadow})
    assert exc.value.field == "name" and repr(name) in exc.value.reason


def test_a_profile_may_not_shadow_one_already_merged():
    first = specs_registry({"my-h100": _parse().to_spec()})
    with pytest.raises(ProfileError, match="my-h100"):
        specs_registry({"my-h100": _parse(peak_tflops=1).to_spec()}, base=first)


def test_a_profile_keyed_under_another_name_is_refused():
    with pytest.raises(ProfileError) as exc:
        specs_registry({"alias": _parse().to_spec()})
    assert exc.value.field == "name"
