"""?preset=article: a redirect to the article's whole demo query, its rank printout as the
article's simulate_3d_parallel prints it, its time steps read off the core's timeline, and
the path it grows along."""

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from page_html import page_data

from app import i18n
from app.core.layout.topology import ARTICLE_PATH, Layout, seed_active_ranks


@pytest.mark.parametrize("path", ["/", "/flow"])
def test_the_preset_redirects_to_the_whole_demo_query(client, path):
    res = client.get(f"{path}?preset=article&lang=zh&rank=5", follow_redirects=False)
    assert res.status_code == 303
    target = urlsplit(res.headers["location"])
    assert target.path == path
    q = dict(parse_qsl(target.query))
    assert q == {"dp": "2", "tp": "2", "pp": "2", "microbatches": "4", "schedule": "naive",
                 "f_time": "1", "p2p_time": "0", "lang": "zh", "rank": "5"}  # fmt: skip
    page = client.get(res.headers["location"])
    assert page.status_code == 200
    model = page_data(page.text)["model"]
    assert model["schedule"]["name"] == "naive" and model["timeline"]["units"] == "abstract"


def test_an_unknown_preset_is_a_422_naming_it(client):
    res = client.get("/?preset=nope")
    assert res.status_code == 422
    assert "preset" in page_data(res.text)["errors"]


def _rows(html: str) -> dict[int, list[str]]:
    table = html[html.index('id="article-ranks"') :]
    table = table[: table.index("</table>")]
    out = {}
    for tr in re.findall(r'<tr data-rank="(\d+)">(.*?)</tr>', table, re.S):
        out[int(tr[0])] = re.findall(r"<td>(.*?)</td>", tr[1])
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_rank_is_printed_as_the_article_prints_it(client, lang):
    html = client.get(f"/?preset=article&lang={lang}").text
    rows = _rows(html)
    assert sorted(rows) == list(range(8))
    assert rows[5] == ["GPU5", "(DP=1, PP=0, TP=1)", "[1, 5]", "7"]
    assert rows[7][3] == i18n.strings(lang)["none.last"]
    assert rows[7][3] == ("none (last stage)" if lang == "en" else "无（最后一阶段）")


def test_the_time_steps_are_the_articles_read_off_the_timeline(client):
    html = client.get("/?preset=article").text
    steps = re.findall(
        r'<li data-step="\d+"><code>time step \d+: active GPUs = \[([\d, ]*)\]', html
    )
    got = [[int(x) for x in s.split(", ")] for s in steps]
    assert got == seed_active_ranks(Layout(2, 2, 2), 4)  # the article's own loop
    assert got[0] == [0, 1, 4, 5] and got[-1] == [2, 3, 6, 7] and len(got) == 5


def test_the_path_links_each_step_and_marks_where_you_are(client):
    html = client.get("/?preset=article&lang=zh").text
    path = html[html.index('id="article-path"') :]
    path = path[: path.index("</ol>")]
    assert 'aria-current="step"' in path.split('data-path="1f1b"')[0]
    hrefs = re.findall(r'<a href="/\?([^"]+)"', path)
    assert len(hrefs) == len(ARTICLE_PATH) - 1
    for href in hrefs:
        page = client.get(f"/?{href.replace('&amp;', '&')}")
        assert page.status_code == 200
        assert 'id="article-path"' in page.text  # each step keeps the path in view
        assert "lang=zh" in href
    assert i18n.strings("zh", quiz=True)["art.path.node"] in path


def test_a_scenario_off_the_path_has_no_demo_panel(client):
    assert 'id="article-demo"' not in client.get("/?dp=4").text
