"""The comparison piece by piece (compare.stream): the head before any evaluation, each column
as soon as it alone is evaluated, and, put back together, exactly what compare() returns."""

import json

import pytest

from app.core.evaluate import compare

PRESET = [("preset", "schedules"), ("pp", "4"), ("microbatches", "8")]
EXPLICIT = [("s", "dp=2"), ("s", "pp=4&schedule=gpipe")]


def assembled(parts: list[tuple[str, dict]]) -> dict:
    """The pieces as one comparison: the head, the columns with their verdicts, the tail."""
    kinds = [k for k, _ in parts]
    assert kinds[0] == "head" and kinds[-1] == "tail"
    assert set(kinds[1:-1]) == {"member"}
    members = [v for k, v in parts if k == "member"]
    tail = dict(parts[-1][1])
    for verdict in tail.pop("verdicts"):
        members[verdict["index"]].update(verdict)
    return {**parts[0][1], "members": members, **tail}


@pytest.mark.parametrize("pairs", [PRESET, EXPLICIT], ids=["preset", "explicit"])
def test_the_pieces_put_together_are_the_comparison(pairs):
    req = compare.parse(pairs)
    whole = compare.compare(req)
    again = assembled(list(compare.stream(req)))
    assert json.dumps(again, sort_keys=True) == json.dumps(whole, sort_keys=True)
    assert [m["index"] for m in again["members"]] == list(range(len(req.members)))
    assert again["count"] == len(req.members)


def test_a_preset_sends_its_head_before_any_work_and_each_column_after_its_own(monkeypatch):
    evaluated = []
    real = compare.evaluate
    monkeypatch.setattr(
        compare, "evaluate", lambda s, *a, **k: evaluated.append(s) or real(s, *a, **k)
    )
    parts = compare.stream(compare.parse(PRESET))
    kind, head = next(parts)
    assert kind == "head" and evaluated == [] and head["count"] == 11
    for i in range(head["count"]):
        kind, member = next(parts)
        assert (kind, member["index"], len(evaluated)) == ("member", i, i + 1)
    assert next(parts)[0] == "tail"


def test_a_refused_explicit_scenario_is_raised_before_the_head():
    # Valid alone, refused by the core's cross-field rules (Megatron needs SP for the overlap).
    parts = compare.stream(
        compare.parse([("s", "dp=2"), ("s", "tp_comm_overlap=true&sequence_parallel=false")])
    )
    with pytest.raises(compare.CompareError) as err:
        next(parts)
    assert [i.loc for i in err.value.issues] == [("query", "s", 1, "tp_comm_overlap")]


def test_the_verdicts_need_every_column_and_name_one_best():
    parts = list(compare.stream(compare.parse(PRESET)))
    members = [v for k, v in parts if k == "member"]
    verdicts = parts[-1][1]["verdicts"]
    assert sorted(v["index"] for v in verdicts) == [m["index"] for m in members if m["valid"]]
    assert sum(v["best"] for v in verdicts) == 1
    assert parts[-1][1]["winner"] == next(v["index"] for v in verdicts if v["best"])
