"""The comparison core: presets, the factory verdicts, the diff table, invalid members."""

from urllib.parse import urlencode

import pytest

from app.core.evaluate import compare, evaluate
from app.core.inputs.scenario import Scenario
from app.core.schedules import ScheduleName


def by_role(result):
    return {m["role"]: m for m in result["members"]}


def test_no_parameters_is_the_factory_preset_of_the_teaching_base():
    result = compare.run([])
    assert result["preset"] == "factory"
    assert result["base"] == dict(compare.TEACHING_BASE)
    assert [m["role"] for m in result["members"]] == ["dp_only", "tp_only", "pp_only", "3d"]
    assert result["urlquery"][0] == ("preset", "factory")


def test_factory_keeps_gpus_model_and_global_batch():
    base = Scenario(dp=2, tp=4, pp=4, microbatches=16, model="megatron-22b")
    members = compare.expand_factory(base)
    assert [(s.dp, s.tp, s.pp) for s in members] == [(32, 1, 1), (1, 32, 1), (1, 1, 32), (2, 4, 4)]
    assert {s.world_size for s in members} == {32}
    assert {s.microbatches * s.dp for s in members} == {32}
    assert {s.model for s in members} == {"megatron-22b"}
    assert members[-1] == base


def test_factory_verdicts_come_from_the_core():
    m = by_role(compare.run([]))
    assert m["dp_only"]["summary"]["fits"] is False
    assert "oom" in [w["code"] for w in m["dp_only"]["why"]]
    assert m["tp_only"]["layout"]["crosses_node"]["tp"] is True
    assert "tp_inter" in [w["code"] for w in m["tp_only"]["why"]]
    assert "bubble" in [w["code"] for w in m["pp_only"]["why"]]
    best = m["3d"]
    assert best["summary"]["fits"] and best["best"]
    for slow in ("tp_only", "pp_only"):
        assert best["summary"]["step_time_s"] < m[slow]["summary"]["step_time_s"]
    # The numbers are evaluate()'s, not recomputed.
    direct = evaluate(Scenario(**compare.TEACHING_BASE))
    assert best["summary"]["step_time_s"] == direct["step_time_s"]
    assert best["summary"]["peak_bytes"] == direct["memory"]["peak_bytes"]


def test_the_timelines_share_one_x_range():
    result = compare.run([])
    axis = result["time_axis"]
    assert axis["shared"] and axis["units"] == "s"
    assert axis["max"] == max(m["timeline"]["end"] for m in result["members"])


def test_diff_lists_exactly_the_fields_that_differ_and_the_node_crossings():
    pairs = [("s", "dp=2&tp=8&pp=2&gpus_per_node=8"), ("s", "dp=2&tp=8&pp=2&gpus_per_node=4")]
    rows = {r["key"]: r for r in compare.run(pairs)["diff"]}
    fields = {k for k, r in rows.items() if r["kind"] == "field"}
    assert fields == {"gpus_per_node"}
    assert rows["gpus_per_node"]["values"] == [8, 4]
    assert rows["world_size"] == {
        "key": "world_size", "kind": "derived", "values": [32, 32], "changed": False
    }  # fmt: skip
    assert rows["nodes"]["values"] == [4, 8]
    assert rows["crosses_node.tp"]["values"] == [False, True]
    assert rows["crosses_node.tp"]["changed"] is True
    assert rows["nodes_spanned.tp"]["values"] == [1, 2]
    assert rows["crosses_node.dp"]["changed"] is False


def test_identical_scenarios_have_no_field_rows():
    rows = compare.run([("s", "dp=4"), ("s", "dp=4")])["diff"]
    assert [r for r in rows if r["kind"] == "field"] == []
    assert not any(r["changed"] for r in rows)


def test_invalid_preset_members_are_kept_with_the_reason():
    # dualpipev needs m >= 2p = 8; interleaved runs m = 6 on p = 4 as torch does (1 round).
    result = compare.run([("preset", "schedules"), ("pp", "4"), ("microbatches", "6")])
    assert len(result["members"]) == len(ScheduleName)
    bad = [m for m in result["members"] if not m["valid"]]
    assert "dualpipev" in [m["scenario"]["schedule"] for m in bad]
    bad = [m for m in bad if m["scenario"]["schedule"] == "dualpipev"]
    assert bad[0]["error"]["field"] == "microbatches"
    assert ">= 2*pp" in bad[0]["error"]["reason"]
    at = list(ScheduleName).index(ScheduleName.dualpipev)
    dualpipev = [r for r in result["diff"] if r["key"] == "nodes"][0]["values"][at]
    assert dualpipev is None
    # m = 9 on p = 4 is 2 rounds that do not divide 9: torch refuses it, and so do we.
    result = compare.run([("preset", "schedules"), ("pp", "4"), ("microbatches", "9")])
    bad = [m for m in result["members"] if not m["valid"]]
    torch_rule = [m for m in bad if "2 rounds" in m["error"]["reason"]]
    assert [m["scenario"]["schedule"] for m in torch_rule] == ["interleaved", "interleaved-zb"]


def test_schedules_preset_has_every_schedule_with_evaluate_s_numbers():
    base = [("pp", "4"), ("microbatches", "8")]
    result = compare.run([("preset", "schedules"), *base])
    members = result["members"]
    assert [m["scenario"]["schedule"] for m in members] == [s.value for s in ScheduleName]
    for m in members:
        assert m["valid"], m.get("error")
        direct = evaluate(Scenario.model_validate(m["scenario"]))
        s = m["summary"]
        assert s["bubble_fraction"] == direct["timeline"]["bubble_fraction"]
        assert s["bubble_over_ideal"] == direct["timeline"]["bubble_over_ideal"]
        assert s["peak_inflight"] == max(direct["timeline"]["peak_inflight"])
        assert s["p2p_bytes"] == direct["comm"]["pp_bytes"]
        acts = max(st["activations_bytes"] for st in direct["memory"]["per_stage"])
        assert s["peak_activation_bytes"] == acts
    by = {m["scenario"]["schedule"]: m for m in members}
    assert by["interleaved"]["scenario"]["virtual_stages"] == 2
    assert by["1f1b"]["summary"]["peak_inflight"] < by["gpipe"]["summary"]["peak_inflight"]
    # naive is forward-only: never the "fastest" of those that train.
    assert not by["naive"]["best"]
    codes = [w["code"] for w in by["naive"]["why"]]
    assert "forward_only" in codes and not {"best", "slower"} & set(codes)


@pytest.mark.parametrize(
    ("pairs", "loc"),
    [
        ([("s", "dp=2")], ("query", "s")),
        ([("s", "dp=2")] * 5, ("query", "s")),
        ([("s", "dp=2"), ("s", "dp=0")], ("query", "s", 1, "dp")),
        ([("s", "dp=2"), ("s", "f_time=nan")], ("query", "s", 1, "f_time")),
        ([("s", "bogus=1"), ("s", "dp=2")], ("query", "s", 0, "bogus")),
        ([("s", "dp=2&dp=3"), ("s", "dp=2")], ("query", "s", 0, "dp")),
        ([("preset", "nope")], ("query", "preset")),
        ([("preset", "factory"), ("tp", "x")], ("query", "tp")),
        ([("s", "dp=2"), ("s", "dp=2"), ("dp", "4")], ("query", "dp")),
    ],
)
def test_bad_input_names_the_field(pairs, loc):
    with pytest.raises(compare.CompareError) as exc:
        compare.parse(pairs)
    assert loc in [i[0] for i in exc.value.issues]


def test_an_explicit_scenario_the_core_refuses_names_its_index_and_field():
    pairs = [("s", "dp=2"), ("s", urlencode({"schedule": "interleaved", "pp": 3}))]
    with pytest.raises(compare.CompareError) as exc:
        compare.run(pairs)
    assert exc.value.issues[0][0] == ("query", "s", 1, "virtual_stages")


def test_the_url_query_round_trips():
    result = compare.run([("s", "dp=4&tp=2"), ("s", "pp=4&schedule=gpipe")])
    again = compare.run(result["urlquery"])
    assert again["members"] == result["members"]
    preset = compare.run([("preset", "schedules"), ("pp", "4"), ("microbatches", "8")])
    assert compare.run(preset["urlquery"])["members"] == preset["members"]
