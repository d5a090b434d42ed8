"""The forward-only naive schedule is not a training step: on /compare?preset=schedules it
is marked unranked, and the winner the verdicts and charts name is a training schedule."""

from app.core.schedules import FORWARD_ONLY
from tests.page_html import page_data


def _check(cmp: dict) -> None:
    members = {m["scenario"]["schedule"]: m for m in cmp["members"]}
    naive = members["naive"]
    assert naive["valid"] and naive["schedule"]["forward_only"]
    assert naive["ranked"] is False and naive["best"] is False
    assert "forward_only" in [w["code"] for w in naive["why"]]
    assert not {"best", "tie", "slower"} & {w["code"] for w in naive["why"]}
    # naive computes the most tokens/s on paper, and still is not the winner
    valid = [m for m in cmp["members"] if m["valid"]]
    assert max(valid, key=lambda m: m["summary"]["tokens_per_s"]) is naive
    winner = cmp["winner"]
    assert winner is not None and winner != naive["index"]
    won = cmp["members"][winner]
    assert won["best"] and won["ranked"] and won["summary"]["fits"]
    assert won["scenario"]["schedule"] not in {s.value for s in FORWARD_ONLY}
    assert [w["code"] for w in won["why"]][-1] == "best"
    assert [m["index"] for m in cmp["members"] if m["valid"] and m["best"]] == [winner]
    for m in valid:
        assert m["ranked"] is (not m["schedule"]["forward_only"])


def test_the_api_marks_naive_forward_only_and_names_a_training_winner(client):
    _check(client.get("/api/compare?preset=schedules").json())


def test_the_page_embeds_the_same_marks(client):
    for lang in ("en", "zh"):
        res = client.get(f"/compare?preset=schedules&lang={lang}")
        assert res.status_code == 200
        _check(page_data(res.text)["comparison"])


def test_an_invalid_columns_reason_carries_its_message_key(client):
    # pp=3: dualpipe needs an even pp; the preset keeps the column, marked invalid.
    cmp = client.get("/api/compare?preset=schedules&pp=3&microbatches=12").json()
    bad = next(m for m in cmp["members"] if m["scenario"]["schedule"] == "dualpipe")
    assert not bad["valid"] and bad["error"]["key"] == "schedule.dualpipe_pp"
    assert bad["error"]["params"] == {"pp": 3} and "got 3" in bad["error"]["reason"]
