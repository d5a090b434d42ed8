"""fp8=search (issue 27, planner_fp8): the planner tries the hardware's FP8 recipes beside
bf16, answers with the recipe that wins and what bf16 would take (the plan with fp8=none's
first row), keeps MFU against the bf16 peak, never picks FP8 on hardware without it, and
the FP8_TRIED bound keeps the candidate that pricing every candidate in FP8 would find."""

from dataclasses import replace

import pytest

from app.core.evaluate import planner_fp8 as fp8s
from app.core.evaluate.one_scenario import prepare
from app.core.evaluate.planner import plan, searched
from app.core.inputs.presets import HARDWARE
from app.core.inputs.scenario import Scenario


def test_recipes_follow_the_hardware():
    assert fp8s.recipes(HARDWARE["a100-80g"]) == ()
    assert fp8s.recipes(HARDWARE["h100-sxm"]) == ("tensorwise",)
    assert fp8s.recipes(HARDWARE["b200"]) == ("tensorwise", "mxfp8")


@pytest.mark.timeout(300)
def test_search_never_picks_fp8_on_a100():
    """On A100 the search is bf16 alone: the same rows as no search, and it says why."""
    args = ("gpt3-13b", "a100-80g", 64, 256)
    got = plan(*args, top=5, recipes=fp8s.recipes(HARDWARE["a100-80g"]))
    plain = plan(*args, top=5)
    assert all("fp8" not in r["query"] for r in got["results"] + got["not_fitting"])
    assert got["results"] == plain["results"]
    assert got["fp8"]["fp8_hardware"] is False and got["fp8"]["searched"] == ["none"]
    assert got["fp8"]["chosen"] == "none" and "fp8" not in plain


@pytest.fixture(scope="module")
def h100_search():
    args = ("llama3-8b", "h100-sxm", 16, 64)
    return plan(*args, top=5, recipes=fp8s.recipes(HARDWARE["h100-sxm"])), plan(*args, top=5)


@pytest.mark.timeout(300)
def test_search_picks_fp8_on_h100_and_says_what_bf16_takes(h100_search):
    got, plain = h100_search
    best, bf16 = got["results"][0], got["fp8"]["bf16"]
    assert best["query"]["fp8"] == "tensorwise" == got["fp8"]["chosen"]
    assert got["fp8"]["searched"] == ["none", "tensorwise"]
    # What bf16 would take is the plain plan's answer, and the FP8 row beats it.
    assert bf16["tokens_per_s"] == plain["results"][0]["tokens_per_s"]
    assert bf16["query"] == plain["results"][0]["query"]
    assert got["fp8"]["speedup"] == best["tokens_per_s"] / bf16["tokens_per_s"] > 1.0
    assert best["why"]["fp8"]["recipe"] == "tensorwise" and best["why"]["fp8"]["gain"] > 1.0
    assert "FP8 tensorwise: +" in best["reason"]


@pytest.mark.timeout(300)
def test_mfu_stays_against_the_bf16_peak(h100_search):
    """Same model FLOPs per token and the same bf16 peak in the denominator: the FP8 row's
    MFU over bf16's is its speed over bf16's."""
    got, _ = h100_search
    best, bf16 = got["results"][0], got["fp8"]["bf16"]
    assert best["mfu"] / bf16["mfu"] == pytest.approx(best["tokens_per_s"] / bf16["tokens_per_s"])


@pytest.mark.timeout(300)
def test_fp8_rows_open_as_their_scenario(h100_search):
    got, _ = h100_search
    for row in got["results"]:
        _, _, cost = prepare(Scenario(**row["query"]))
        assert cost.sections["tokens_per_s"] == row["tokens_per_s"]
        assert cost.sections["memory"]["peak_bytes"] == row["peak_bytes"]


@pytest.mark.timeout(300)
def test_the_fp8_bound_keeps_the_fastest_fp8_candidate():
    """Pricing every fitting candidate in FP8 finds the same fastest as pricing the first
    FP8_TRIED of the bf16 ranking."""
    closed, pool = searched("llama3-8b", "h100-sxm", 16, 64)
    fitting = [(closed.tokens_per_s(c), p, c) for c, p in zip(pool, closed.peaks(pool), strict=True)
               if p <= closed.capacity]  # fmt: skip
    fitting.sort(key=lambda x: -x[0])
    assert len(fitting) > fp8s.FP8_TRIED, "the bound must cut something here"
    every = [replace(c, fp8="tensorwise") for *_, c in fitting]
    fits = [c for c, p in zip(every, closed.peaks(every), strict=True) if p <= closed.capacity]
    best = max(fits, key=closed.tokens_per_s)
    bounded = fp8s.variants(closed, fitting, ("tensorwise",))
    assert max(bounded, key=lambda x: x[0])[2] == best


@pytest.mark.timeout(600)
def test_a_671b_moe_search_says_what_the_bf16_plan_answers():
    """DeepSeek-V3 on 2,048 H100s: the bf16 answer is a DualPipeV sibling of a 1F1B row
    ranked well below the first; the search's bf16 numbers are still fp8=none's first row
    (planner._shortlist simulates what fp8=none simulates). With the EP all-to-all at one
    NIC share per GPU across nodes (comm.all_to_all_s) the first is an in-node EP 4
    DualPipeV row in both searches: FP8 never ranks below the bf16 answer."""
    args = ("deepseek-v3", "h100-sxm", 2048, 4096)
    got = plan(*args, top=3, recipes=fp8s.recipes(HARDWARE["h100-sxm"]))
    plain = plan(*args, top=3)["results"][0]
    assert got["fp8"]["bf16"]["query"] == plain["query"]
    assert got["fp8"]["bf16"]["tokens_per_s"] == plain["tokens_per_s"]
    assert got["results"][0]["tokens_per_s"] >= plain["tokens_per_s"]
