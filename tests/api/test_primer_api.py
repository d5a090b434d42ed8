"""GET /api/primer and /primer: the JSON is the core's, bad state is a 422 naming the field,
the page embeds the same primer, the nav links to it, and it stays under the asset budget."""

from __future__ import annotations

import pytest
from page_html import page_data

from app.core.evaluate.primer import PrimerParams, primer
from app.core.inputs.scenario import Scenario


def test_the_primer_json_is_the_cores(client):
    res = client.get("/api/primer?dp=4&tp=2&group=tp&rank=5&step=1&zero=3")
    assert res.status_code == 200
    body = res.json()
    expect = primer(Scenario(dp=4, tp=2, zero=3), PrimerParams(group="tp", rank=5, step=1))
    assert body == expect
    assert body["ring"]["ranks"] == [4, 5] and body["group"]["axis"] == "tp"
    assert body["zero"]["selected"] == 3 and body["zero"]["ranks"] == [1, 5, 9, 13]
    assert {"memory_timeline", "memory"} <= set(body)


@pytest.mark.parametrize(
    "query,field",
    [
        ("group=xx", "group"),
        ("rank=8", "rank"),
        ("rank=-1", "rank"),
        ("step=3", "step"),
        ("group=tp&tp=4&step=7", "step"),
        ("dp=0", "dp"),
        ("bogus=1", "bogus"),
    ],
)
def test_bad_state_is_a_422_naming_the_field(client, query, field):
    res = client.get(f"/api/primer?{query}")
    assert res.status_code == 422
    assert [d["loc"][1] for d in res.json()["detail"]] == [field]
    page = client.get(f"/primer?{query}")
    assert page.status_code == 422
    data = page_data(page.text)
    assert field in data["errors"] and data["primer"] is None


def test_the_page_embeds_the_primer_and_keeps_the_scenario_in_its_links(client):
    res = client.get("/primer?dp=4&zero=1&rank=4&step=2&lang=zh&color=dp")
    assert res.status_code == 200
    data = page_data(res.text)
    assert data["primer"] == primer(Scenario(dp=4, zero=1), PrimerParams(rank=4, step=2))
    assert data["state"]["lang"] == "zh" and data["state"]["step"] == 2
    assert 'href="/?dp=4&amp;zero=1&amp;rank=4&amp;lang=zh&amp;color=dp"' in res.text
    zero3 = "/primer?dp=4&amp;rank=4&amp;step=2&amp;lang=zh&amp;color=dp&amp;zero=3"
    assert f'href="{zero3}"' in res.text
    assert '<input type="hidden" name="zero" value="1">' in res.text


@pytest.mark.parametrize("path", ["/", "/flow", "/trend"])
def test_the_scenario_pages_link_the_primer_with_their_query(client, path):
    page = client.get(f"{path}?dp=4&pp=4")
    assert 'data-nav="primer" href="/primer?dp=4&amp;pp=4"' in page.text


@pytest.mark.parametrize("path", ["/primer", "/primer?lang=zh&dp=4&zero=3&group=tp"])
def test_the_primer_stays_under_the_asset_budget(client, path):
    from asset_budget import page_files

    page = client.get(path)
    assert page.status_code == 200
    files = page_files(page.text)
    names = {f.name for f in files}
    assert {"primer.js", "primer_ring.js", "primer_zero.js", "primer_memory.js"} <= names
    assert all(f.exists() for f in files)
    assert sum(f.stat().st_size for f in files) < 100_000
