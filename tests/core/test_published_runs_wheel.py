"""The wheel ships published_runs.json: without it an installed app fails importing the board."""

import zipfile

import pytest
from wheel_build import build_wheel

from app.core.fidelity.published_runs import RUNS
from app.core.fidelity.run_loader import parse


@pytest.mark.timeout(300)
def test_the_wheel_carries_the_rows_the_checkout_loads(tmp_path):
    wheel = zipfile.ZipFile(build_wheel(tmp_path))
    text = wheel.read("app/core/fidelity/published_runs.json").decode("utf-8")
    assert parse(text) == RUNS
