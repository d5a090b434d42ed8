"""The cost model against published runs, with one set of constants for every row."""

import pytest

from app.core.fidelity import PUBLISHED, compare, published_mfu

BAND = 0.35  # |predicted - published| / published, for every row; see docs/fidelity.md


@pytest.mark.parametrize("run", PUBLISHED, ids=lambda r: f"{r.model}-{r.gpus}")
def test_iteration_time_within_the_band(run):
    assert abs(compare(run).time_error) < BAND


@pytest.mark.parametrize("run", [r for r in PUBLISHED if r.mfu is not None and r.iteration_s])
def test_korthikanti_table_5_mfu_follows_from_the_published_times(run):
    assert published_mfu(run) == pytest.approx(run.mfu, abs=0.005)


def test_the_megatron_rows_are_within_a_tighter_band_as_they_grow():
    big = [compare(r) for r in PUBLISHED if r.model in ("megatron-530b", "megatron-1t")]
    assert all(abs(c.time_error) < 0.15 for c in big)
