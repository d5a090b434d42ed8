"""The planner under uneven splits: interleaved candidates need not divide the layers, and
a row that DeepSpeed would refuse (ZeRO-2/3 with pipelines) says so in its why."""

from app.core.evaluate import planner
from app.core.inputs.models import MODELS
from app.core.inputs.presets import HARDWARE


def test_zero_2_and_3_with_pipelines_carry_deepspeed_s_refusal():
    result = planner.plan("llama3-70b", "h100-sxm", 64, 128, top=10)
    rows = result["results"] + result["not_fitting"]
    # Both kinds are among the rows: refused (ZeRO-2/3 with pp > 1) and not.
    assert {r["zero"] >= 2 and r["pp"] > 1 for r in rows} == {True, False}
    for row in rows:
        notes = [n["code"] for n in row["why"]["notes"]]
        refused = row["zero"] >= 2 and row["pp"] > 1
        assert notes == (["deepspeed_refuses_zero_pp"] if refused else []), row["query"]
        assert ("DeepSpeed refuses" in row["reason"]) == refused


def test_the_note_names_the_stage_and_the_frameworks_that_allow_it():
    (note,) = planner.framework_notes(3, 4)
    assert note["zero"] == 3 and note["allowed_by"] == ["megatron", "torchtitan"]
    assert planner.framework_notes(1, 4) == [] and planner.framework_notes(3, 1) == []
    why = {"lead": "fastest", "of_best": 1.0, "bubble": 0.1, "tp_share": 0.1, "dp_share": 0.1,
           "memory": 0.5, "notes": [note]}  # fmt: skip
    assert planner.reason_text(why).endswith(
        "DeepSpeed refuses ZeRO-3 with pipeline parallelism (Megatron-LM and torchtitan's "
        "FSDP + PP allow ZeRO-3-like sharding)"
    )


def test_interleaved_candidates_no_longer_need_layers_divisible_by_pp_times_v():
    m = MODELS["llama3-405b"]  # 126 layers: 16 * 2 does not divide them
    pool = planner.candidates(m, HARDWARE["h100-sxm"], 1024, 2048)
    assert any(c.schedule == "interleaved" and c.pp == 16 and c.v == 2 for c in pool)
    assert all(c.pp * c.v <= m.layers for c in pool)
