"""GET /api/scenario says which step time it gives: ZB-H2's steady state of back-to-back steps
(Qi et al. 2024 §4 post-validation), every other schedule's single step."""

import pytest

QUERY = "/api/scenario?schedule={}&pp=4&microbatches=8&f_time=1&b_time=1&w_time=1"


def test_zb_h2_reports_its_steady_state_step_beside_its_single_step(client):
    tl = client.get(QUERY.format("zb-h2")).json()["timeline"]
    sp = tl["step_period"]
    assert sp["shown"] == "steady_state" and sp["period"] == 24 and sp["single_step"] == 27
    assert tl["makespan"] == 27 and sp["bubble_fraction"] == pytest.approx(0.0)
    assert "post-validation" in sp["label"] and sp["key"] == "step_period.steady_state"


def test_zb_h1_reports_its_single_step(client):
    sp = client.get(QUERY.format("zb-h1")).json()["timeline"]["step_period"]
    assert sp["shown"] == "single_step" and sp["period"] == 27 == sp["single_step"]
