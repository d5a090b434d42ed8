"""The measured-run pages (/runs, a run's page, the no-such-run page) had a shorter nav than
every other page: no Learn, Collectives or Self-test, so a reader who came from a run could
not reach them. Their nav now lists every page the scenario pages' nav lists (the JSON API
link aside: it opens the scenario the page shows, and a run page shows none)."""

import re

import pytest

NAV = re.compile(r"<nav>(.*?)</nav>", re.S)
HREF = re.compile(r'href="(/[^"?]*)')


def _pages(html: str) -> set[str]:
    return set(HREF.findall(NAV.search(html).group(1))) - {"/api/scenario"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_run_pages_nav_reaches_every_page(client, lang):
    main = _pages(client.get("/", params={"lang": lang}).text)
    assert {"/learn", "/primer", "/quiz", "/runs"} <= main
    for path in ("/runs", "/runs/no-such-run"):
        res = client.get(path, params={"lang": lang})
        assert _pages(res.text) == main, path
        links = re.findall(r'href="([^"]*)"', NAV.search(res.text)[1])
        assert all(("?lang=zh" in a) == (lang == "zh") for a in links), links
