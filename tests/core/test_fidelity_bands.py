"""The error band of a kind of configuration: which published rows it takes, and the fallback
to the whole hardware generation, then to every row, when a kind has too few."""

from dataclasses import replace

import pytest

from app.core.fidelity import bands as fidelity_bands
from app.core.fidelity import board as fidelity
from app.core.fidelity.board import Row
from app.core.fidelity.published_runs import RUNS
from app.core.inputs.scenario import Scenario

BASE = next(r for r in RUNS if r.hardware == "a100-80g" and r.zero == "none")


def row(error: float, hardware: str = "a100-80g", tp=8, pp=8, dp=8, zero="none", reason=""):
    """A predicted row of that configuration whose error is ``error`` (published 10 s)."""
    run = replace(BASE, hardware=hardware, tp=tp, pp=pp, dp=dp, zero=zero)
    if reason:
        return Row(run, reason)
    return Row(run, "", 10.0, 10.0 * (1 + error), 12.0, {}, hardware)


def test_a_preset_is_the_generation_whose_constants_it_uses():
    assert fidelity_bands.generation("a100-80g") == "ampere"
    assert fidelity_bands.generation("a100-40g") == "ampere"
    assert fidelity_bands.generation("a100-unspecified") == "ampere"  # MegaScale's alias
    assert fidelity_bands.generation("h100-sxm") == "hopper"
    assert fidelity_bands.generation("h200") == "hopper"
    for name in ("b200", "mi300x", "l40s", "gb200-nvl72", "no-such-gpu"):
        assert fidelity_bands.generation(name) is None, name


def test_a_scenarios_kind_is_its_generation_its_axes_above_one_and_zero3():
    k = fidelity_bands.scenario_kind(Scenario(hardware="a100-80g", dp=4, tp=1, pp=2, zero=3))
    assert k == fidelity_bands.Kind("ampere", tp=False, pp=True, dp=True, zero3=True)
    assert fidelity_bands.row_kind(row(0.1, tp=1, pp=2, dp=4, zero="fsdp")) == k


def test_a_kind_with_enough_rows_takes_only_those_rows():
    rows = [row(0.02), row(-0.04), row(0.06), row(0.5, tp=1), row(0.9, tp=1, pp=1)]
    band = fidelity_bands.band(rows, fidelity_bands.row_kind(rows[0]))
    assert band["level"] == "kind"
    assert band["rows"] == 3
    assert band["median_abs"] == pytest.approx(0.04)
    assert band["max_abs"] == pytest.approx(0.06)
    assert band["within_10pct"] == 3
    assert band["hardware"] == ["a100-80g"]


def test_a_kind_with_fewer_than_three_rows_falls_back_to_its_generation():
    rows = [row(0.02), row(-0.04), row(0.30, tp=1, pp=1), row(0.01, hardware="h100-sxm")]
    band = fidelity_bands.band(rows, fidelity_bands.row_kind(rows[2]))
    assert band["level"] == "generation"
    assert band["rows"] == 3  # the three A100 rows, not the H100 one
    assert band["max_abs"] == pytest.approx(0.30)
    assert band["kind"]["tp"] is False  # the kind asked for, not the rows taken


def test_a_generation_with_fewer_than_three_rows_falls_back_to_every_row():
    rows = [row(0.02), row(0.04), row(0.06), row(0.5, hardware="h100-sxm")]
    band = fidelity_bands.band(rows, fidelity_bands.row_kind(rows[3]))
    assert (band["level"], band["rows"]) == ("all", 4)
    assert band["hardware"] == ["a100-80g", "h100-sxm"]


def test_left_out_rows_never_count():
    rows = [row(0.02), row(0.04), row(0.06), row(0, reason="FP8 is not modelled")]
    assert fidelity_bands.band(rows, fidelity_bands.row_kind(rows[0]))["rows"] == 3


def test_hardware_without_predicted_rows_is_not_validated():
    rows = [row(0.02), row(0.04), row(0.06)]
    assert fidelity_bands.band(rows, fidelity_bands.scenario_kind(Scenario())) is None  # H100
    for hw in ("b200", "mi300x", "h200"):
        out = fidelity_bands.band_for(rows, Scenario(hardware=hw))
        assert out == {"validated": False, "reason": "hardware", "hardware": hw}


def test_a_scenario_that_overrides_the_hardwares_speed_is_not_validated():
    rows = [row(0.02), row(0.04), row(0.06)]
    a100 = Scenario(hardware="a100-80g", dp=8, tp=8, pp=8)
    assert fidelity_bands.band_for(rows, a100)["validated"] is True
    assert fidelity_bands.band_for(rows, a100.model_copy(update={"hbm_gib": 40.0}))["validated"]
    for field in ("peak_tflops", "intra_gbps", "inter_gbps"):
        out = fidelity_bands.band_for(rows, a100.model_copy(update={field: 100.0}))
        assert out["validated"] is False and out["reason"] == "overrides", field


def test_a_band_says_whether_its_rows_ran_on_the_scenarios_own_hardware():
    rows = [row(0.02, hardware="h100-sxm"), row(0.04, hardware="h100-sxm"), row(0.06, "h100-sxm")]
    assert fidelity_bands.band_for(rows, Scenario(hardware="h100-sxm"))["same_hardware"] is True
    h800 = fidelity_bands.band_for(rows, Scenario(hardware="h800"))
    assert h800["validated"] and h800["same_hardware"] is False  # Hopper constants, H100 rows


def test_every_reason_the_core_gives_has_a_code_the_page_translates():
    reasons = {fidelity.left_out(r) for r in RUNS} - {""}
    assert reasons
    assert {fidelity_bands.reason_code(r) for r in reasons} <= set(
        fidelity_bands.REASON_CODES.values()
    )


def test_the_report_summarises_the_model_and_the_baseline_overall_and_per_source():
    rows = [row(0.02), row(-0.2), row(0.06, hardware="h100-sxm"), row(0, reason="x")]
    rep = fidelity_bands.report(rows)
    assert (rep["runs"], rep["predicted"]) == (4, 3)
    assert rep["summary"]["model"] == fidelity.summary([r.error for r in rows[:3]])
    assert rep["summary"]["baseline"] == fidelity.summary([0.2, 0.2, 0.2])
    assert [s["family"] for s in rep["sources"]] == [fidelity.source_family(BASE)]
    assert rep["left_out"] == [{"reason": "x", "reason_code": "other", "rows": 1}]
    assert [r["error"] for r in rep["rows"]] == [r.error for r in rows]
    # Two A100 rows and one H100 row: too few of either generation, so both take every row.
    assert [(k["level"], k["rows"]) for k in rep["kinds"]] == [("all", 3), ("all", 3)]
