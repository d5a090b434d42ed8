"""The memory half of the accuracy board: published_memory.json read by its typed loader
(every malformed row refused naming the row and the field), each row predicted on the figure
it measured, the Llama rows the previous model put 43-57% under now within the target, and
the published OOM outcomes called."""

import copy
import json
import statistics
from importlib import resources

import pytest

from app.core.fidelity import memory_board as board
from app.core.fidelity import memory_loader as loader
from app.i18n import strings

RAW = json.loads(
    resources.files("app.core.fidelity").joinpath(loader.DATA).read_text(encoding="utf-8")
)


def rows_with(edit) -> dict:
    obj = copy.deepcopy(RAW)
    edit(obj["rows"][3])
    return obj


def test_the_packaged_file_loads_every_row():
    rows = loader.load()
    assert len(rows) == 54 and len({r.id for r in rows}) == 54
    assert sum(r.measured.outcome == "oom" for r in rows) == 7
    assert rows[0].model.ffn_hidden == 14336 and rows[0].parallel.zero_stage == 3


@pytest.mark.parametrize(
    "edit,field",
    [
        (lambda r: r.update(extra=1), "extra"),
        (lambda r: r.pop("note"), "note"),
        (lambda r: r["model"].pop("hidden"), "model.hidden"),
        (lambda r: r["model"].update(hidden="4096"), "model.hidden"),
        (lambda r: r["model"].update(layers=0), "model.layers"),
        (lambda r: r["model"].update(gated_mlp=1), "model.gated_mlp"),
        (lambda r: r["parallel"].update(zero_stage=4), "parallel.zero_stage"),
        (lambda r: r["parallel"].update(gpus=9), "parallel.gpus"),
        (lambda r: r["parallel"].update(pipeline_schedule="1f1b"), "parallel.pipeline_schedule"),
        (lambda r: r["parallel"].update(vpp=2), "parallel.vpp"),
        (lambda r: r["training"].update(recompute="some"), "training.recompute"),
        (lambda r: r["measured"].update(outcome="crashed"), "measured.outcome"),
        (lambda r: r["measured"].update(peak_allocated_gib=99.0), "measured.peak_allocated_gib"),
        (lambda r: r["measured"].update(other_gib={"x": -1}), "measured.other_gib"),
        (lambda r: r["model"].update(kv_heads=5), "model.kv_heads"),
        (lambda r: r.update(id=RAW["rows"][0]["id"]), "id"),
    ],
)
def test_a_malformed_row_is_refused_naming_the_row_and_field(edit, field):
    with pytest.raises(loader.MemoryDataError) as err:
        loader.rows_from(rows_with(edit))
    assert err.value.field == field and err.value.where.startswith("rows[3]")


def test_not_json_or_a_missing_top_key_is_refused():
    with pytest.raises(loader.MemoryDataError):
        loader.parse("{")
    with pytest.raises(loader.MemoryDataError) as err:
        loader.rows_from({"rows": []})
    assert err.value.field == "about"


# --- the board -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def results():
    return {r.row.id: r for r in board.rows()}


@pytest.fixture(scope="module")
def compiled():
    return {r.row.id: r for r in board.compiled_rows()}


def test_every_row_is_predicted_or_says_why(results):
    assert len(results) == 54
    for r in results.values():
        assert bool(r.reason) != (r.query is not None), r.row.id
        if not r.reason:
            assert r.capacity_gib and r.peak_gib and r.predicted_fits is not None
            assert r.figure or r.published_oom  # a figure, or an outcome to call


def test_each_row_is_compared_on_the_figure_it_measured(results):
    megatron = results["megatron-ci-gpt3-7b-tp4-pp1-h100"]
    assert megatron.figure == "allocated" and megatron.measured_gib == 53.219
    titan = results["torchtitan-202412-t1-8b-fsdp8-base"]
    assert titan.figure == "reserved" and titan.measured_gib == 82.4
    hf = results["hf-perf-docs-bert-large-v100-vanilla-bs4"]
    assert hf.figure == "nvidia-smi"  # reserved plus the floor (here the V100's 1,343 MiB)


# The full-AC torchtitan Llama rows of the issue: the previous model (3a03a55^, as
# `python bench/fidelity_memory.py` prints it) put them 54%, 56% and 53% under. All three
# ran torch.compile, which the board leaves out of its headline; predicted as eager here.
PREVIOUSLY_UNDER = {
    "torchtitan-202412-t2-8b-fsdp8-cp1-seq32k": -0.540,
    "torchtitan-202412-t4-70b-fsdp32-tp8": -0.556,
    "torchtitan-202412-t4-70b-fsdp32-tp8-asynctp": -0.528,
}
# The eager Llama rows of the headline (torchtitan FSDP2 8B at 8 and 128 GPUs, torchtune).
EAGER_LLAMA = (
    "torchtitan-202412-t1-8b-fsdp8-base",
    "torchtitan-202412-t3-8b-fsdp128-base",
    "torchtune-readme-llama2-7b-full-4x4090",
)


def test_the_previously_underpredicted_llama_rows_land_within_the_target(compiled, results):
    errors = [compiled[i].error for i in PREVIOUSLY_UNDER]
    assert max(abs(e) for e in errors) <= board.TARGETS["max_abs"], errors
    assert statistics.median(abs(e) for e in errors) <= board.TARGETS["median_abs"], errors
    eager = [results[i].error for i in EAGER_LLAMA]
    assert max(abs(e) for e in eager) <= board.TARGETS["median_abs"], eager


# torchtitan's CP rows (Table 2: Llama 3 8B, 8 GPUs, the sequence doubled as cp doubles):
# the peak stays flat, because FSDP shards over dp x cp and each rank keeps s/cp tokens. They
# were left out until CP was modelled; predicting ZeRO over dp alone put them 21-107% over.
CP_ROWS = (
    "torchtitan-202412-t2-8b-fsdp4-cp2-seq64k",
    "torchtitan-202412-t2-8b-fsdp2-cp4-seq128k",
    "torchtitan-202412-t2-8b-fsdp1-cp8-seq256k",
)


def test_the_context_parallel_rows_are_predicted_within_the_target(compiled, results):
    for row_id in CP_ROWS:
        assert results[row_id].reason.startswith("torch.compile"), row_id  # not "cp"
        r = compiled[row_id]
        assert r.query["cp"] == row_id.split("-cp")[1][0] and r.predicted_fits, row_id
        assert abs(r.error) <= board.TARGETS["median_abs"], (row_id, r.error)


def test_the_headline_median_meets_the_target(results):
    s = board.summary(list(results.values()))
    assert s["median_abs"] <= board.TARGETS["median_abs"]
    assert s["rows"] >= 19 and s["ooms"] == 6


OOMS = sorted(r.id for r in loader.load() if r.measured.outcome == "oom")
# Every published OOM is called since LitGPT's no_sync accumulation is priced (its Llama 2 7B
# was 17.9 of 24 GiB, "fits", before: tests/core/test_memory_framework_knobs.py).
MISSED: set[str] = set()
LEFT_OUT = {"megatron-bridge-pr3107-llama3-70b-sft-tp4-pp4-vpp5-fp8cs"}  # TE FP8


@pytest.mark.parametrize(
    "row_id",
    [
        pytest.param(i, marks=pytest.mark.xfail(strict=True, reason="known miss, see MISSED"))
        if i in MISSED
        else i
        for i in OOMS
    ],
)
def test_every_published_oom_is_predicted_not_to_fit(results, row_id):
    r = results[row_id]
    if row_id in LEFT_OUT:
        assert "FP8" in r.reason
        return
    assert not r.reason and r.predicted_fits is False, (r.peak_gib, r.capacity_gib)


def test_runs_that_ran_are_predicted_to_fit(results):
    ran = [r for r in results.values() if not r.reason and not r.published_oom]
    wrong = sorted(r.row.id for r in ran if not r.predicted_fits)
    # torchtrain's April 2024 13B at TP4 was predicted 80.2 GiB on 80 until its per-op SAC
    # kept no reduce-scatter outputs (memory_board.SAC_LEGACY_RS): 72.9 against 71 reserved.
    assert wrong == []


def test_the_overview_card_draws_every_component_in_both_languages():
    static = resources.files("app").parent / "static" / "js"
    # The card draws palette.MEMORY_PARTS (shared with the comparison's memory chart).
    assert "MEMORY_PARTS" in (static / "cards.js").read_text()
    js = (static / "palette.js").read_text()
    for key in ("grad_accum_bytes", "gather_bytes", "logits_transient_bytes",
                "recompute_transient_bytes", "fragmentation_bytes", "floor_bytes"):  # fmt: skip
        assert f'"{key}"' in js, key
    for lang in ("en", "zh"):
        table = strings(lang)
        for label in ("mem.grad_accum", "mem.logits", "mem.floor", "mem.figures",
                      "formulas.cause.floor", "formulas.cause.logits_fused"):  # fmt: skip
            assert table[label].strip(), (lang, label)
