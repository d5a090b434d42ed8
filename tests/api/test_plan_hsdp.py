"""The planner's HSDP rows on the API and the page (issue 27): a row sharded over dp_shard
ranks says so in its fields, its share link and its why, in English and Chinese."""

import pytest

Q = "/api/plan?model=llama3-8b&hardware=h100-sxm&gpus=64&global_batch=512&top=5"


def test_an_hsdp_row_names_its_dp_shard_and_opens_as_its_scenario(client):
    rows = client.get(Q).json()["results"]
    hsdp = [r for r in rows if r["dp_shard"] is not None]
    assert hsdp, "Llama 3 8B on 64 H100s has an HSDP row among its first five"
    row = hsdp[0]
    assert row["query"]["dp_shard"] == str(row["dp_shard"]) and row["zero"] == 3
    assert f"HSDP dp_shard={row['dp_shard']}" in row["reason"]
    assert all(r["dp_shard"] is None and "dp_shard" not in r["query"] for r in rows
               if r not in hsdp)  # fmt: skip
    scenario = client.get("/api/scenario", params=row["query"]).json()
    assert scenario["tokens_per_s"] == pytest.approx(row["tokens_per_s"], rel=1e-9)


@pytest.mark.parametrize(("lang", "words"), [("en", "inside one NVLink domain"),
                                             ("zh", "位于同一 NVLink 域内")])  # fmt: skip
def test_the_page_shows_the_shard_groups_and_links_them(client, lang, words):
    page = client.get(Q.replace("/api/plan", "/plan") + ("&lang=zh" if lang == "zh" else ""))
    assert page.status_code == 200
    assert 'data-axis="dp_shard">HSDP 8 × 8<' in page.text and words in page.text
    assert "dp_shard=8" in page.text  # in the row's share link
