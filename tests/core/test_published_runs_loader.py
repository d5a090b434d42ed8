"""The published-runs data file and its loader: the packaged file loads into RUNS, and each
kind of malformed row is refused with the row and the field named."""

import copy
import json
from importlib import resources

import pytest

from app.core.fidelity import run_loader
from app.core.fidelity.published_runs import RUNS, PublishedRun
from app.core.fidelity.run_loader import RunsDataError, parse, rows_from

ARCH = {
    "name": "tiny", "layers": 4, "hidden": 256, "heads": 8, "kv_heads": None,
    "ffn_hidden": 1024, "vocab": 1000, "seq_len": 128, "gated_mlp": False,
    "arch_source": "made up for the test",
}  # fmt: skip
ROW = {
    "id": "a", "source": "Someone 2024 Table 1", "url": "arXiv:0000.00000", "arch": "tiny",
    "hardware": "a100-80g", "gpus_per_node": 8, "interconnect": "NVLink", "gpus": 16,
    "tp": 2, "pp": 2, "dp": 4, "vpp": 2, "global_batch": 64, "micro_batch": 2,
    "schedule": "interleaved", "recompute": "full", "recompute_layers": 2,
    "sequence_parallel": None, "zero": "none", "precision": "bf16", "iteration_s": 1.5,
    "mfu": 0.41, "flop_formula": "", "verified": True,
}  # fmt: skip


def data(*rows: dict) -> dict:
    return {"about": ["test"], "architectures": {"tiny": dict(ARCH)}, "runs": list(rows)}


def refused(obj: dict) -> RunsDataError:
    with pytest.raises(RunsDataError) as info:
        rows_from(obj)
    err = info.value
    assert err.where in str(err) and repr(err.field) in str(err)
    return err


def test_the_packaged_file_loads_into_runs_once():
    text = resources.files("app.core.fidelity").joinpath("published_runs.json").read_text("utf-8")
    assert parse(text) == RUNS == rows_from(json.loads(text))
    assert run_loader.load() is run_loader.load() is RUNS  # read once, shared
    assert len(RUNS) == 119 and len({r.id for r in RUNS}) == len(RUNS)  # 14 MoE rows: issue 27
    assert all(isinstance(r, PublishedRun) and r.source and r.url for r in RUNS)


def test_a_valid_row_takes_the_defaults_it_leaves_out():
    (run,) = rows_from(data(dict(ROW)))
    assert run.arch.name == "tiny" and run.cp == 1 and run.tokens_per_s is None
    assert run.caveat == run.note == "" and run.tflops_per_gpu is None


def test_a_figure_written_as_an_integer_is_kept_as_published():
    (run,) = rows_from(data(ROW | {"iteration_s": 2}))
    assert run.iteration_s == 2


@pytest.mark.parametrize(
    "change, field",
    [
        ({"flops": 1.0}, "flops"),  # a key PublishedRun lacks
        ({"tp": "2"}, "tp"),  # a number written as text
        ({"gpus": True}, "gpus"),  # a bool is never a count
        ({"hardware": None}, "hardware"),  # null where the field is required to hold a value
        ({"mfu": "41%"}, "mfu"),
        ({"verified": 1}, "verified"),
        ({"caveat": ["a", "b"]}, "caveat"),
        ({"tp": 0}, "tp"),  # counts are positive
        ({"iteration_s": -1.0}, "iteration_s"),
        ({"iteration_s": float("inf")}, "iteration_s"),
        ({"tokens_per_s": float("nan")}, "tokens_per_s"),
        ({"mfu": 41}, "mfu"),  # a percentage where a fraction belongs
        ({"schedule": "gpipe"}, "schedule"),  # a word the board does not know
        ({"precision": "BF16"}, "precision"),
        ({"interconnect": ""}, "interconnect"),
        ({"arch": "huge"}, "arch"),  # not in 'architectures'
        ({"gpus": 32}, "gpus"),  # not tp x pp x dp x cp
        ({"schedule": "none"}, "schedule"),  # no schedule with pp 2
        ({"vpp": 2, "schedule": "1f1b"}, "vpp"),
        ({"recompute": "selective"}, "recompute_layers"),  # layer count without full recompute
        ({"recompute_layers": 5}, "recompute_layers"),  # more than the arch's 4 layers
        ({"global_batch": 60}, "global_batch"),  # not a multiple of dp x micro_batch = 8
    ],
)
def test_a_malformed_row_is_refused_naming_row_and_field(change, field):
    err = refused(data(dict(ROW), ROW | {"id": "b"} | change))
    assert (err.where, err.field) == ("runs[1] 'b'", field)


@pytest.mark.parametrize("key", ["id", "tp", "global_batch", "flop_formula", "verified"])
def test_a_missing_required_key_is_refused(key):
    row = {k: v for k, v in ROW.items() if k != key}
    err = refused(data(row))
    assert err.field == key and err.where.startswith("runs[0]")


def test_a_repeated_id_names_both_rows():
    err = refused(data(dict(ROW), ROW | {"tp": 1, "dp": 8}))
    assert (err.where, err.field) == ("runs[1] 'a'", "id") and "runs[0]" in str(err)


@pytest.mark.parametrize(
    "change, field",
    [({"layers": 0}, "layers"), ({"heads": 8.0}, "heads"), ({"moe": True}, "moe"),
     ({"kv_heads": 3}, "kv_heads")],
)  # fmt: skip
def test_a_malformed_architecture_is_refused_by_name(change, field):
    obj = data(dict(ROW))
    obj["architectures"]["tiny"] |= change
    err = refused(obj)
    assert (err.where, err.field) == ("architectures['tiny']", field)


def test_the_file_itself_must_be_json_with_the_three_sections():
    with pytest.raises(RunsDataError, match="not JSON"):
        parse("{")
    assert refused(data() | {"extra": 1}).field == "extra"
    assert refused({"about": [], "runs": []}).field == "architectures"
    assert refused(data() | {"runs": {"a": ROW}}).field == "runs"
    assert refused(data("a row")).where == "runs[0]"


def test_a_mutated_copy_of_the_real_file_is_refused_at_the_row_it_breaks():
    text = resources.files("app.core.fidelity").joinpath("published_runs.json").read_text("utf-8")
    obj = copy.deepcopy(json.loads(text))
    obj["runs"][5]["dp"] = 31
    err = refused(obj)
    assert (err.where, err.field) == (f"runs[5] {RUNS[5].id!r}", "gpus")
