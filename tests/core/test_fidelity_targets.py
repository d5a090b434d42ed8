"""Issue 9's targets over the published rows it was set on (large models, multi-node sources):
median <= 5%, max <= 15%, and ahead of the flat 50%-of-peak estimate on every source; the rows
behind the sharded-DP physics named. Issue 23's rows (small models on one node) are held to the
same targets in a strict xfail until the cost model meets them."""

from collections import defaultdict

import pytest

from app.core.fidelity import board as fidelity

ROWS = [r for r in fidelity.rows() if not r.reason]


def small_on_one_node(r: fidelity.Row) -> bool:
    """Issue 23's population: hidden <= 2,048 on at most one 8-GPU node."""
    return r.run.gpus <= 8 and r.run.arch.hidden <= 2048


# Issue 9's targets were set on 16-bit rows; the FP8 rows (issue 27) are their own
# population, held to their own figures in tests/core/test_fp8.py.
# The mixture-of-experts rows (FP8 too) are theirs, in tests/core/test_fidelity_moe.py.
SIXTEEN = [r for r in ROWS if r.run.precision != "fp8" and not r.run.moe]
PREDICTED = [r for r in SIXTEEN if not small_on_one_node(r)]  # issue 9's population
SMALL = [r for r in SIXTEEN if small_on_one_node(r)]


def test_no_published_row_is_off_by_more_than_15_percent():
    worst = max(PREDICTED, key=lambda r: abs(r.error))
    assert abs(worst.error) <= 0.15, (worst.run.source, worst.run.gpus, worst.error)
    assert fidelity.summary([r.error for r in PREDICTED])["median_abs"] <= 0.05


def test_the_model_beats_the_flat_baseline_on_every_source():
    by: dict[str, list] = defaultdict(list)
    for r in PREDICTED:
        by[fidelity.source_family(r.run)].append(r)
    for source, rows in by.items():
        model = fidelity.summary([r.error for r in rows])["median_abs"]
        flat = fidelity.summary([r.baseline_error for r in rows])["median_abs"]
        assert model < flat, source


def test_sharded_rows_are_predicted_with_their_frameworks_settings():
    zero3 = [r for r in PREDICTED if r.run.zero == "zero-3"]
    fsdp = [r for r in PREDICTED if r.run.zero == "fsdp"]
    assert len(zero3) == 3 and len(fsdp) == 3
    # MosaicML's Composer FSDP rows (issue 23) are priced with the same FSDP settings.
    assert all(r.query["grad_reduce_fp32"] == "true" for r in SMALL if r.run.zero == "fsdp")
    for r in zero3:  # DeepSpeed: per-tensor gathers, its 5e7-parameter prefetch hides ~none
        assert r.query["zero3_per_tensor"] == "true" and "overlap_param_gather" not in r.query
    for r in fsdp:  # torchtitan FSDP2: prefetched block gathers, fp32 reduce-scatter
        assert r.query["overlap_param_gather"] == "true" and r.query["grad_reduce_fp32"] == "true"
    layer_sac = [r for r in fsdp if r.run.recompute_layers]
    assert len(layer_sac) == 2 and all(r.query["recompute_layers"] == "16" for r in layer_sac)


def test_issue_23_has_small_one_node_rows_from_several_sources():
    assert len(SMALL) >= 10 and len({fidelity.source_family(r.run) for r in SMALL}) >= 2
    assert {r.run.micro_batch for r in SMALL} >= {1, 2, 4, 8}
    assert {r.hardware for r in SMALL} >= {"a100-80g", "h100-sxm"}


@pytest.mark.xfail(
    strict=True,
    reason="issue 23: median 2.2% but max 25%: MosaicML's 2023 H100 table is 13-25% fast "
    "(inputs match the source, test_llmfoundry_rows.py; no published Hopper-wide cause found)",
)
def test_small_one_node_rows_meet_issue_9s_targets():
    mags = fidelity.summary([r.error for r in SMALL])
    assert mags["max_abs"] <= 0.15 and mags["median_abs"] <= 0.05
