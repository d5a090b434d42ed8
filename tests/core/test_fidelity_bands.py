"""The error band of a kind of configuration: held-out rows of the scenario's kind only, the
nearest validated kind when its own is not, and no band where no measured step is like it."""

from dataclasses import replace

import pytest

from app.core.fidelity import bands as fidelity_bands
from app.core.fidelity import board as fidelity
from app.core.fidelity import kinds
from app.core.fidelity.board import Row
from app.core.fidelity.published_runs import RUNS
from app.core.inputs.scenario import Scenario

# Narayanan Table 1, row 5: A100, 8/2/32, 1F1B, no SP; a shape every variant below can take.
# The scenarios below say sequence_parallel=False to be of its kind (SP is on by default).
BASE = next(r for r in RUNS if r.id == "narayanan2021-t1-r5")


def run(hardware="a100-80g", tp=8, pp=2, dp=32, zero="none", source=BASE.source, sp=False):
    return replace(BASE, hardware=hardware, tp=tp, pp=pp, dp=dp, zero=zero, source=source,
                   sequence_parallel=sp, gpus=tp * pp * dp)  # fmt: skip


def row(held_out, error=0.0, reason="", **kw):
    """A predicted row whose in-sample error is ``error`` and held-out error ``held_out``
    (None: no held-out prediction); published 10 s."""
    r = run(**kw)
    if reason:
        return Row(r, reason)
    held_s = None if held_out is None else 10.0 * (1 + held_out)
    return Row(r, "", 10.0, 10.0 * (1 + error), 12.0, {}, r.hardware, held_s, 0.74, "generation")


def kind_of_row(r: Row) -> kinds.ConfigKind:
    return fidelity_bands.run_kind(r.run)


def test_a_preset_is_the_generation_whose_constants_it_uses():
    assert kinds.generation("a100-80g") == "ampere"
    assert kinds.generation("a100-40g") == "ampere"
    assert kinds.generation("a100-unspecified") == "ampere"  # MegaScale's alias
    assert kinds.generation("h100-sxm") == "hopper"
    assert kinds.generation("h200") == "hopper"
    for name in ("b200", "mi300x", "l40s", "gb200-nvl72", "no-such-gpu"):
        assert kinds.generation(name) is None, name


def test_the_kind_key_is_generation_schedule_axes_zero3_and_sp():
    k = kinds.kind_of(Scenario(hardware="a100-80g", dp=4, tp=2, pp=2, zero=3,
                               sequence_parallel=True, schedule="interleaved", virtual_stages=2,
                               microbatches=4))  # fmt: skip
    assert k == kinds.ConfigKind("ampere", "interleaved", True, True, True, True, True)
    expected = ("generation", "schedule", "tp", "pp", "dp", "zero3", "sp", "fp8", "cp", "moe")
    assert expected == kinds.FIELDS
    # An FP8 recipe is a kind of its own: its rows never share a band with 16-bit ones.
    fp8 = kinds.kind_of(Scenario(hardware="h100-sxm", dp=8, tp=1, pp=1, fp8="tensorwise"))
    assert fp8.fp8 and not kinds.kind_of(Scenario(hardware="h100-sxm", dp=8, tp=1, pp=1)).fp8
    # So is context parallelism: a CP run's band comes from CP rows only.
    cp = kinds.kind_of(Scenario(hardware="h100-sxm", dp=4, tp=1, pp=1, cp=2))
    assert cp.cp and not kinds.kind_of(Scenario(hardware="h100-sxm", dp=8, tp=1, pp=1)).cp
    # Without a pipeline the schedule says nothing; without TP, sequence parallelism neither.
    flat = kinds.kind_of(Scenario(hardware="h100-sxm", dp=8, tp=1, pp=1, schedule="gpipe",
                                  sequence_parallel=True))  # fmt: skip
    assert (flat.schedule, flat.sp, flat.generation) == ("none", False, "hopper")


def test_a_rows_kind_is_the_kind_of_the_scenario_it_is_predicted_as():
    for r in RUNS:
        if not fidelity.left_out(r):
            assert fidelity_bands.run_kind(r) == kinds.kind_of(fidelity.scenario_of(r)), r.id
    zero3 = fidelity_bands.run_kind(run(tp=1, pp=1, dp=64, zero="fsdp"))
    assert zero3 == kinds.ConfigKind("ampere", "none", False, False, True, True, False)


def test_a_validated_kind_takes_only_its_held_out_errors():
    rows = [row(0.02, error=0.5), row(-0.04, error=0.5), row(0.06, error=0.5),
            row(0.5, tp=1), row(0.9, tp=1, pp=1)]  # fmt: skip
    s = Scenario(sequence_parallel=False, hardware="a100-80g", dp=32, tp=8, pp=2)
    band = fidelity_bands.band_for(rows, s)
    assert band["validated"] is True and band["held_out"] is True and band["nearest"] is None
    assert band["kind"] == kinds.as_json(kind_of_row(rows[0]))
    assert band["rows"] == 3 and band["ids"] == [BASE.id] * 3
    assert band["median_abs"] == pytest.approx(0.04)  # the held-out errors, not the 0.5s
    assert band["max_abs"] == pytest.approx(0.06)
    assert band["sources"] == [fidelity.source_family(BASE)] and band["same_hardware"]


def test_rows_without_a_held_out_error_never_count():
    rows = [row(None, error=0.01), row(None, error=0.02), row(None, error=0.03)]
    band = fidelity_bands.band_for(
        rows, Scenario(sequence_parallel=False, hardware="a100-80g", dp=32, tp=8, pp=2)
    )
    assert band["validated"] is False and band["rows"] == 0 and band["nearest"] is None
    left = [row(0.02), row(0.04), row(0.0, reason="FP8 is not modelled")]
    assert (
        fidelity_bands.band_for(
            left, Scenario(sequence_parallel=False, hardware="a100-80g", dp=32, tp=8, pp=2)
        )["rows"]
        == 2
    )


def test_a_kind_with_fewer_than_three_rows_is_not_validated_and_names_the_nearest():
    zero3 = [row(0.10, tp=1, pp=1, zero="zero-3", source=f"S{i} et al.") for i in range(3)]
    tp_dp = [row(0.05, pp=1), row(0.07, pp=1), row(0.03, pp=1), row(0.04, pp=1)]
    rows = [*zero3, *tp_dp, row(0.3, tp=1, pp=1)]  # one DP-only row: too few
    band = fidelity_bands.band_for(
        rows, Scenario(sequence_parallel=False, hardware="a100-80g", dp=32, tp=1, pp=1)
    )
    assert band["validated"] is False and band["reason"] == "kind" and band["held_out"]
    assert band["rows"] == 1 and band["median_abs"] == pytest.approx(0.3)  # its own, for the record
    near = band["nearest"]
    # ZeRO-3 DP-only differs in one field (zero3), TP·DP in one (tp): the one with more rows.
    assert near["kind"] == kinds.as_json(kind_of_row(tp_dp[0]))
    assert near["differs"] == [{"field": "tp", "this": False, "other": True}]
    assert near["rows"] == 4 and near["median_abs"] == pytest.approx(0.045)
    # Fewest differing fields first, whatever the rows: a 3-row kind one field away beats
    # a 4-row kind two fields away.
    own = fidelity_bands.band_for(
        rows, Scenario(sequence_parallel=False, hardware="a100-80g", dp=32, tp=1, pp=1, zero=3)
    )
    assert own["validated"] and own["sources"] == ["S0", "S1", "S2"]
    far = fidelity_bands.band_for(
        rows, Scenario(sequence_parallel=False, hardware="h100-sxm", dp=32, tp=1, pp=1, zero=3)
    )
    assert far["nearest"]["kind"]["zero3"] is True
    assert [d["field"] for d in far["nearest"]["differs"]] == ["generation"]


def test_no_band_for_a_forward_only_schedule_or_a_scenario_that_does_not_fit():
    rows = [row(0.02, pp=4), row(0.04, pp=4), row(0.06, pp=4)]
    naive = Scenario(
        sequence_parallel=False, hardware="a100-80g", dp=32, tp=8, pp=4, schedule="naive"
    )
    assert fidelity_bands.band_for(rows, naive)["reason"] == "forward_only"
    s = Scenario(sequence_parallel=False, hardware="a100-80g", dp=32, tp=8, pp=4)
    assert fidelity_bands.band_for(rows, s)["validated"] is True
    oom = fidelity_bands.band_for(rows, s, fits=False)
    assert oom == {"validated": False, "reason": "oom", "hardware": "a100-80g"}


def test_hardware_without_fitted_constants_is_not_validated():
    rows = [row(0.02), row(0.04), row(0.06)]
    for hw in ("b200", "mi300x"):
        out = fidelity_bands.band_for(rows, Scenario(sequence_parallel=False, hardware=hw))
        assert out == {"validated": False, "reason": "hardware", "hardware": hw}


def test_a_scenario_that_overrides_the_hardwares_speed_is_not_validated():
    rows = [row(0.02), row(0.04), row(0.06)]
    a100 = Scenario(sequence_parallel=False, hardware="a100-80g", dp=32, tp=8, pp=2)
    assert fidelity_bands.band_for(rows, a100)["validated"] is True
    assert fidelity_bands.band_for(rows, a100.model_copy(update={"hbm_gib": 40.0}))["validated"]
    for field in ("peak_tflops", "intra_gbps", "inter_gbps"):
        out = fidelity_bands.band_for(rows, a100.model_copy(update={field: 100.0}))
        assert out["validated"] is False and out["reason"] == "overrides", field


def test_a_band_says_whether_its_rows_ran_on_the_scenarios_own_hardware():
    rows = [row(x, hardware="h100-sxm") for x in (0.02, 0.04, 0.06)]
    s = Scenario(sequence_parallel=False, hardware="h100-sxm", dp=32, tp=8, pp=2)
    assert fidelity_bands.band_for(rows, s)["same_hardware"] is True
    h800 = fidelity_bands.band_for(rows, s.model_copy(update={"hardware": "h800"}))
    assert h800["validated"] and h800["same_hardware"] is False  # Hopper constants, H100 rows


def test_every_reason_the_core_gives_has_a_code_the_page_translates():
    reasons = {fidelity.left_out(r) for r in RUNS} - {""}
    assert reasons
    assert {fidelity_bands.reason_code(r) for r in reasons} <= set(
        fidelity_bands.REASON_CODES.values()
    )


def test_the_report_gives_in_sample_held_out_and_baseline_overall_and_per_source():
    rows = [row(0.1, error=0.02), row(-0.3, error=-0.2), row(0.2, error=0.06, hardware="h100-sxm"),
            row(None, reason="x")]  # fmt: skip
    rep = fidelity_bands.report(rows)
    assert (rep["runs"], rep["predicted"]) == (4, 3)
    assert rep["summary"]["model"] == fidelity.summary([r.error for r in rows[:3]])
    assert rep["summary"]["held_out"]["median_abs"] == pytest.approx(0.2)
    assert rep["summary"]["baseline"] == fidelity.summary([0.2, 0.2, 0.2])
    (src,) = rep["sources"]
    assert src["family"] == fidelity.source_family(BASE) and src["held_out"]["rows"] == 3
    assert src["held_out_fits"] == [
        {"hardware": h, "ceiling": 0.74, "pool": "generation"} for h in ("a100-80g", "h100-sxm")
    ]
    assert rep["left_out"] == [{"reason": "x", "reason_code": "other", "rows": 1}]
    assert [r["held_out_error"] for r in rep["rows"][:3]] == pytest.approx([0.1, -0.3, 0.2])
    # Two A100 rows and one H100 row of one shape: two kinds, neither validated.
    assert [(k["kind"]["generation"], k["rows"], k["validated"]) for k in rep["kinds"]] == [
        ("ampere", 2, False),
        ("hopper", 1, False),
    ]
    assert rep["kinds"][0]["in_sample"]["median_abs"] == pytest.approx(0.11)
