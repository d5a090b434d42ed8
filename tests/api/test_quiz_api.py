"""/api/quiz and /quiz: every proof link opens a scenario the app evaluates, progress lives
in the URL, and bad values are a 422 naming the field."""

import re
from html import unescape

import pytest
from page_html import page_data

from app import i18n
from app.core.teach import quiz

LINKS = sorted({(q.id, link.href(lang)) for q in quiz.QUESTIONS for link in q.links
                for lang in ("en", "zh")})  # fmt: skip


@pytest.mark.parametrize(("qid", "href"), LINKS, ids=[f"q{i}:{h[:40]}" for i, h in LINKS])
def test_every_proof_link_opens_a_scenario_that_evaluates(client, qid, href):
    res = client.get(href)  # ?preset=article follows its redirect to the whole query
    assert res.status_code == 200, f"question {qid}: {href}"
    data = page_data(res.text)
    assert data["errors"] == {}
    shown = data.get("model") or data.get("comparison") or data.get("sweep")
    assert shown, f"question {qid}: {href} drew nothing"
    if data.get("comparison"):
        assert all(m["valid"] for m in data["comparison"]["members"])


def test_the_api_answers_each_question_in_the_language_asked(client):
    body = client.get("/api/quiz?lang=zh&answers=3b").json()
    assert len(body["questions"]) == len(quiz.QUESTIONS)
    q3 = next(q for q in body["questions"] if q["id"] == 3)
    assert q3["text"] == i18n.strings("zh", quiz=True)[f"quiz.{quiz.BY_ID[3].key}.q"]
    assert q3["picked"] == "b" and q3["answer"] == quiz.LETTERS[quiz.BY_ID[3].answer]
    assert all(link["href"].endswith("lang=zh") for link in q3["links"])
    assert body["progress"]["answered"] == 1 and body["href"] == "/quiz?lang=zh&answers=3b"


def _cards(html: str) -> dict[int, str]:
    parts = re.split(r'(?=<article class="card quiz-q)', html)[1:]
    return {int(re.search(r'data-question="(\d+)"', p).group(1)): p for p in parts}


def test_the_page_shows_the_urls_progress_and_only_the_answered_reasoning(client):
    wrong = 1 - quiz.BY_ID[1].answer
    res = client.get(f"/quiz?answers=1{quiz.LETTERS[wrong]},9a")
    assert res.status_code == 200
    cards = _cards(res.text)
    assert len(cards) == len(quiz.QUESTIONS)
    assert "wrong" in cards[1].split(">")[0] and "data-picked" in cards[1].split(">")[0]
    assert "right" in cards[9].split(">")[0]
    assert '<div class="answer" aria-live="polite" hidden>' in cards[2]
    assert '<div class="answer" aria-live="polite">' in cards[1]
    progress = re.search(r'id="quiz-progress"[^>]*>([^<]*)<', res.text).group(1)
    assert progress == "2 of 15 answered, 1 right".replace("15", str(len(quiz.QUESTIONS)))
    # Answering another question keeps the first answers in its link.
    href = unescape(re.search(r'class="choice"[^>]*href="([^"]+)"', cards[2]).group(1))
    assert href.startswith(f"/quiz?answers=1{quiz.LETTERS[wrong]},2a,9a#q2")


def test_only_shows_a_teachers_set(client):
    res = client.get("/quiz?only=3,5&lang=zh")
    assert res.status_code == 200 and sorted(_cards(res.text)) == [3, 5]
    assert 'href="/quiz?lang=zh"' in res.text  # the way back to every question


@pytest.mark.parametrize(
    ("query", "field"),
    [("answers=99a", "answers"), ("answers=1z", "answers"), ("only=100", "only"),
     ("lang=fr", "lang"), ("bogus=1", "bogus")],
)  # fmt: skip
def test_bad_values_are_a_422_naming_the_field(client, query, field):
    api = client.get(f"/api/quiz?{query}")
    assert api.status_code == 422
    assert api.json()["detail"][0]["loc"] == ["query", field]
    page = client.get(f"/quiz?{query}")
    assert page.status_code == 422
    assert field in page_data(page.text)["errors"]
    assert len(_cards(page.text)) >= 2  # the questions are still there to answer


def _members(client, link: quiz.Link) -> list[dict]:
    res = client.get(link.href().replace("/compare?", "/api/compare?"))
    assert res.status_code == 200
    return res.json()["members"]


def test_the_proofs_show_what_the_answers_say(client):
    gpipe, one_f = (m["summary"] for m in _members(client, quiz.GPIPE_1F1B))
    # Same bubble, fewer micro-batches in flight: 1F1B saves memory, not bubble.
    assert gpipe["bubble_fraction"] == pytest.approx(one_f["bubble_fraction"])
    assert one_f["peak_inflight"] < gpipe["peak_inflight"]
    assert one_f["peak_activation_bytes"] < gpipe["peak_activation_bytes"]
    dp1, dp4 = _members(client, quiz.DP_STATE)
    state = ("weights_bytes", "grads_bytes", "optimizer_bytes")
    for key in state:  # DP copies the model state: per GPU it does not shrink
        assert dp1["memory"]["per_stage"][0][key] == dp4["memory"]["per_stage"][0][key]
    inside, across = _members(client, quiz.TP_NODE)
    assert not inside["layout"]["crosses_node"]["tp"] and across["layout"]["crosses_node"]["tp"]
    share = [m["breakdown"]["tp_s"] / m["summary"]["step_time_s"] for m in (inside, across)]
    assert share[1] > share[0]
    plain, inter = (m["summary"] for m in _members(client, quiz.BY_ID[14].links[0]))
    assert inter["bubble_fraction"] < plain["bubble_fraction"]
    assert inter["p2p_bytes"] > plain["p2p_bytes"]


@pytest.mark.parametrize("path", ["/quiz", "/quiz?lang=zh&answers=1b", "/?preset=article"])
def test_the_pages_stay_under_the_asset_budget(client, path):
    from asset_budget import page_files

    page = client.get(path)
    assert page.status_code == 200
    files = page_files(page.text)
    assert any(f.suffix == ".js" for f in files) and any(f.suffix == ".css" for f in files)
    assert sum(f.stat().st_size for f in files) < 100_000


def test_the_comparison_never_ranks_an_out_of_memory_column_and_words_a_tie(client):
    # GPipe and 1F1B run at the same tokens/s; GPipe runs out of memory (the quiz's proof).
    gpipe, one_f = _members(client, quiz.GPIPE_1F1B)
    assert not gpipe["summary"]["fits"] and one_f["best"]
    assert {w["code"] for w in gpipe["why"]} & {"slower", "tie", "best"} == set()
    twin = quiz.Link(
        "x", "/compare", (("s", "dp=1&tp=2&pp=2"), ("s", "dp=1&tp=2&pp=2&order=article"))
    )
    first, second = _members(client, twin)
    assert first["best"] and [w["code"] for w in second["why"]][-1] == "tie"
    slow_link = quiz.TP_NODE  # TP 8 in a node against TP 16 over two
    fast, slow = _members(client, slow_link)
    verdict = slow["why"][-1]
    ratio = slow["summary"]["tokens_per_s"] / fast["summary"]["tokens_per_s"]
    assert verdict == {"code": "slower", "share": pytest.approx(ratio)} and ratio < 1
