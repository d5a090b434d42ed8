"""The planner page: each row's why in the page language, with the framework notes."""

import pytest

from app import i18n


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_zero_with_pipeline_row_says_deepspeed_refuses_it_in_the_page_language(client, lang):
    # Llama 3 8B on 16 H100s now plans pp = 1 only (SP on): a 70B on 32 keeps pipelines.
    q = {"model": "llama3-70b", "hardware": "h100-sxm", "gpus": "32", "global_batch": "64"}
    api = client.get("/api/plan", params=q).json()
    flagged = [r for r in api["results"] if r["zero"] >= 2 and r["pp"] > 1]
    assert flagged and all(r["why"]["notes"] for r in flagged)
    page = client.get("/plan", params={**q, "lang": lang}).text
    note = i18n.strings(lang)["plan.note.deepspeed_refuses_zero_pp"]
    assert page.count(note) >= len(flagged)
