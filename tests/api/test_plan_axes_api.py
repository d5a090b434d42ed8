"""GET /api/plan and /plan with context and expert parallelism (issue 27): each row says its
cp and ep, a long sequence (seq_len) is planned with cp and every row's link opens the very
scenario it ranked, a mixture of experts with ep; a bad seq_len is a 422 naming it."""

import pytest

from app import i18n

LONG = {"model": "llama3-8b", "hardware": "h100-sxm", "gpus": "32", "global_batch": "32",
        "seq_len": "131072"}  # fmt: skip


@pytest.mark.timeout(300)
def test_a_long_sequence_plan_rows_say_cp_and_open_as_scenarios(client):
    body = client.get("/api/plan", params={**LONG, "top": "5"}).json()
    rows = body["results"]
    assert rows and rows[0]["cp"] > 1 and {r["ep"] for r in rows} == {1}
    for r in rows:
        assert r["dp"] * r["tp"] * r["pp"] * r["cp"] == 32
        assert r["query"]["model"] == "llama3-8b" and r["query"]["seq_len"] == "131072"
        again = client.get("/api/scenario", params=r["query"])
        assert again.status_code == 200, again.text
        got = again.json()
        assert got["tokens_per_s"] == pytest.approx(r["tokens_per_s"])
        assert got["scenario"]["cp"] == r["cp"] and got["scenario"]["seq_len"] == 131072


@pytest.mark.timeout(300)
def test_a_mixture_of_experts_plan_rows_say_ep(client):
    q = {"model": "qwen3-30b-a3b", "hardware": "h100-sxm", "gpus": "16", "global_batch": "64"}
    rows = client.get("/api/plan", params={**q, "top": "20"}).json()["results"]
    assert rows and any(r["ep"] > 1 for r in rows)
    for r in rows:
        assert r["cp"] == 1 and r["dp"] * r["tp"] * r["pp"] == 16
        if r["ep"] > 1:
            assert r["query"]["ep"] == str(r["ep"]) and r["query"]["order"] == "tp-cp-ep-dp-pp"
            assert client.get("/api/scenario", params=r["query"]).status_code == 200


@pytest.mark.parametrize("value", ["0", "-5", "2097152", "long"])
def test_a_bad_seq_len_is_a_422_naming_it(client, value):
    r = client.get("/api/plan", params={**LONG, "seq_len": value})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == "seq_len"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_plan_page_shows_cp_and_the_sequence_length_field(client, lang):
    page = client.get("/plan", params={**LONG, "top": "3", "lang": lang}).text
    assert 'data-axis="cp"' in page
    assert i18n.strings(lang)["plan.field.seq_len"] in page
    assert 'name="seq_len" value="131072"' in page
    # The form's empty field is the model's own length, not an error.
    short = {**LONG, "seq_len": "", "gpus": "8", "global_batch": "16", "top": "3"}
    plain = client.get("/plan", params=short).text
    assert 'id="plan-table"' in plain and 'data-axis="cp"' not in plain
    assert 'name="seq_len" value=""' in plain
