"""What the published runs say of a planner row, and its memory headroom, through the API and
the page. The core's planner may not import the accuracy board (app.core.evaluate sits below
app.core.fidelity), so app/api/plan.py turns the board's rows into the planner's Judge.

Before, GPT-3 175B on 64 A100s was planned at 66% MFU with DualPipeV, a schedule no published
run validates, while Megatron's published A100 runs top out in the mid-50s; nothing said so."""

import pytest
from markupsafe import escape

from app import i18n
from app.api.plan import PlanQuery, judge_of, published_mfu
from app.core.evaluate import planner
from app.core.evaluate.planner_trust import ERROR_BAND, Shape
from app.core.fidelity import bands, board, kinds
from app.core.inputs.scenario import Scenario

SP = ("sequence_parallel", "overlap_grad_reduce")
# Llama 3 8B on 4 H100s at a 30% headroom: tight rows and rows with room, side by side (on 16
# GPUs every tight row now falls below the top ten: Hopper's held-out band is 14.9% wide).
TIGHT = {"model": "llama3-8b", "hardware": "h100-sxm", "gpus": "4", "global_batch": "16",
         "headroom": "0.3"}  # fmt: skip


def page_band(rows, s):
    """The held-out band a scenario's page shows (bands.band_for): its kind's, else the
    nearest validated kind's, as (max |error|, level)."""
    band = bands.band_for(rows, s)
    if band["validated"]:
        return band["max_abs"], "kind"
    return (
        (band["nearest"]["max_abs"], "nearest") if band.get("nearest") else (ERROR_BAND, "constant")
    )


def test_the_judge_names_what_no_validated_published_run_covers(fidelity_board):
    rows = fidelity_board.rows()
    judge = judge_of(rows)
    megatron = judge(Shape("a100-80g", "interleaved", 8, 8, 8, 0, SP))
    assert megatron.unvalidated == ()
    s = Scenario(hardware="a100-80g", schedule="interleaved", virtual_stages=2, dp=8, tp=8, pp=8,
                 microbatches=16, sequence_parallel=True)  # fmt: skip
    assert (megatron.band, megatron.band_level) == page_band(rows, s)
    # The highest MFU of a predicted A100 run that splits the model: Megatron's mid-50s. A
    # small model's data-parallel run on one node reached more (MosaicML's MPT, ~61%), which
    # says nothing of a TP x PP mesh.
    assert 0.5 < megatron.mfu_ceiling < 0.6
    predicted = [(r, board.scenario_of(r.run)) for r in rows if not r.reason]
    ampere = [(r, s) for r, s in predicted if kinds.generation(s.hardware) == "ampere"]
    split = [published_mfu(r) for r, s in ampere if s.tp > 1 or s.pp > 1]
    assert megatron.mfu_ceiling == max(split)
    whole = [published_mfu(r) for r, s in ampere if s.tp == s.pp == 1]
    assert max(whole) > 0.6 > max(split)
    flat = judge(Shape("a100-80g", "1f1b", 8, 1, 1, 3, ()))  # dp 8, tp 1, pp 1, ZeRO-3
    assert flat.mfu_ceiling == max(whole)
    assert judge(Shape("a100-80g", "dualpipev", 8, 8, 8, 0, SP)).unvalidated == ("schedule",)
    knob = judge(Shape("a100-80g", "1f1b", 8, 8, 8, 0, (*SP, "tp_comm_overlap")))
    assert knob.unvalidated == ("tp_comm_overlap",)
    assert judge(Shape("a100-80g", "1f1b", 8, 8, 8, 3, SP)).unvalidated == ("kind",)
    other = judge(Shape("mi300x", "1f1b", 8, 8, 8, 0, SP))
    assert other.unvalidated == ("hardware",) and other.band == ERROR_BAND
    assert other.band_level == "constant" and other.mfu_ceiling is None


def test_rows_above_published_mfu_or_on_unvalidated_schedules_are_extrapolated(client):
    body = client.get("/api/plan").json()  # GPT-3 175B on 64 A100s, the query
    assert body["judged"] is True
    rows = body["results"] + body["not_fitting"]
    assert not body["results"][0]["tight"]
    for r in rows:
        why = r["why"]["extrapolated"]
        assert r["extrapolated"] == bool(why), r["query"]
        if r["schedule"] not in ("1f1b", "interleaved"):
            assert "schedule" in why
        assert ("mfu" in why) == (r["mfu"] > r["why"]["mfu_ceiling"])
        assert ("tp_comm_overlap" in why) == r["tp_comm_overlap"]
        if r["mfu"] > 0.6:
            assert r["extrapolated"] and "extrapolated: " in r["reason"]
    assert any(r["schedule"] == "dualpipev" for r in rows)


def test_the_core_alone_judges_nothing():
    rows = planner.plan("llama3-8b", "h100-sxm", 8, 32, top=3)["results"]
    assert {r["extrapolated"] for r in rows} == {None}
    assert {r["error_band"] for r in rows} == {ERROR_BAND}


def test_a_tight_row_comes_first_only_when_faster_than_the_kind_s_band(client, fidelity_board):
    body = client.get("/api/plan", params=TIGHT).json()
    rows = body["results"]
    assert body["headroom"] == 0.3 and {r["tight"] for r in rows} == {True, False}
    for i, a in enumerate(rows):
        # The planner's band is the one the row's own page shows: held-out, of its kind.
        s = Scenario.model_validate(a["query"])
        assert a["error_band"] == page_band(fidelity_board.rows(), s)[0]
        for b in rows[i + 1 :]:
            if a["tight"] and not b["tight"]:
                assert a["tokens_per_s"] > b["tokens_per_s"] * (1 + a["error_band"])


@pytest.mark.parametrize("value", ["0.9", "-0.01", "nan", "inf", "lots"])
def test_a_headroom_out_of_range_is_a_422_naming_it(client, value):
    r = client.get("/api/plan", params={"headroom": value})
    assert r.status_code == 422
    assert [e["loc"][-1] for e in r.json()["detail"]] == ["headroom"]
    page = client.get("/plan", params={"headroom": value})
    assert page.status_code == 422 and 'data-field="headroom"' in page.text


def test_the_shortlist_covers_the_largest_top_the_api_allows():
    top = PlanQuery.model_json_schema()["properties"]["top"]
    assert top["maximum"] <= planner.SHORTLIST


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_the_badges_and_the_knobs_in_its_language(client, lang):
    body = client.get("/api/plan", params=TIGHT).json()
    api = body["results"] + body["not_fitting"]
    page = client.get("/plan", params={**TIGHT, "lang": lang}).text
    t = i18n.strings(lang)
    tight = [r for r in api if r["tight"]]
    assert page.count('data-badge="tight"') == len(tight) > 0
    assert page.count('data-badge="extrapolated"') == sum(r["extrapolated"] for r in api) > 0
    free = f"{tight[0]['margin_bytes'] / (1 << 30):.1f} GiB"
    label = (
        t["plan.tight.free"].replace("{free}", free).replace("{pct}", f"{tight[0]['margin']:.1%}")
    )
    assert label in page
    assert t["plan.badge.extrapolated"] in page and t["plan.knob.sequence_parallel"] in page
    lead = t["plan.beyond.lead"].split("{")[0]  # "extrapolated: " and the reasons after it
    assert page.count(lead) >= sum(r["extrapolated"] for r in api)
    assert escape(t["plan.trust_hint"].replace("{headroom}", "30%")) in page
