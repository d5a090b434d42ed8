"""torchtitan export: a TOML whose every section.key is one torchtitan v0.2.2's
job_config.py defines (export_fixtures/torchtitan_v0.2.2_keys.txt), whose schedule is a name
torch's get_schedule_class knows, whose model parts are the split meshscope draws, and which
refuses what torchtitan cannot run."""

from pathlib import Path

import pytest

from app.core.export import export
from app.core.inputs.scenario import Scenario
from app.core.inputs.specs import model_of
from app.core.schedules.pipeline import plan

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the project also runs on 3.10
FIXTURES = Path(__file__).parent / "export_fixtures"
KEYS = {
    line.strip()
    for line in (FIXTURES / "torchtitan_v0.2.2_keys.txt").read_text().splitlines()
    if line and not line.startswith("#")
}


def _toml(**q) -> dict:
    e = export("torchtitan", Scenario(**q))
    assert e.ok, e.reason
    assert e.framework.version == "v0.2.2" and "job_config.py" in e.text.splitlines()[0]
    return tomllib.loads(e.text)


SWEEP = [
    {},
    {"zero": 3, "schedule": "zbv", "microbatches": 4},
    {"schedule": "interleaved", "virtual_stages": 2, "pp": 4, "microbatches": 8,
     "tp_comm_overlap": True},
    {"schedule": "dualpipev", "pp": 2, "microbatches": 4, "recompute": "full"},
    {"selective_ac": "op", "dtype": "fp32", "pp": 1},
    {"model": "gpt3-1.3b", "recompute": "none", "master_weights": False, "tp": 1},
    {"zero": 2, "dp": 4},
]  # fmt: skip


@pytest.mark.parametrize("q", SWEEP)
def test_every_key_is_spelt_as_torchtitan_v0_2_2_spells_it(q):
    doc = _toml(**q)
    used = {f"{section}.{key}" for section, table in doc.items() for key in table}
    assert used and used <= KEYS, used - KEYS


@pytest.mark.parametrize("q", SWEEP)
def test_the_schedule_is_one_torch_knows_by_that_name(q):
    schedules = pytest.importorskip("torch.distributed.pipelining.schedules")
    par = _toml(**q)["parallelism"]
    if "pipeline_parallel_schedule" in par:
        cls = schedules.get_schedule_class(par["pipeline_parallel_schedule"])
        assert cls.__name__.endswith(par["pipeline_parallel_schedule"])


def test_degrees_batches_and_checkpointing_carry_the_scenario():
    doc = _toml(dp=4, tp=2, pp=4, zero=3, microbatches=8, micro_batch_size=2, recompute="full")
    par, tr = doc["parallelism"], doc["training"]
    assert par["data_parallel_shard_degree"] == 4 and par["data_parallel_replicate_degree"] == 1
    assert par["fsdp_reshard_after_forward"] == "always"  # ZeRO-3: gathered again for backward
    assert (par["tensor_parallel_degree"], par["pipeline_parallel_degree"]) == (2, 4)
    assert par["pipeline_parallel_schedule"] == "1F1B"
    assert par["pipeline_parallel_microbatch_size"] == 2
    # torchtitan: micro-batches = local_batch_size // pipeline_parallel_microbatch_size
    assert tr["local_batch_size"] // par["pipeline_parallel_microbatch_size"] == 8
    assert tr["global_batch_size"] == tr["local_batch_size"] * 4
    assert doc["activation_checkpoint"] == {"mode": "full"}
    ddp = _toml(dp=4)["parallelism"]
    assert ddp["data_parallel_replicate_degree"] == 4 and ddp["data_parallel_shard_degree"] == 1
    assert "fsdp_reshard_after_forward" not in ddp
    zero2 = _toml(dp=4, zero=2)["parallelism"]  # FSDP2 without resharding: ZeRO-2
    assert (
        zero2["data_parallel_shard_degree"] == 4 and zero2["fsdp_reshard_after_forward"] == "never"
    )
    flat = _toml(pp=1, dp=2, microbatches=4, micro_batch_size=2)["training"]
    # no PP: train.py accumulates global // (local x dp) = 4 micro-batches of 2
    assert flat["global_batch_size"] // (flat["local_batch_size"] * 2) == 4
    assert flat["local_batch_size"] == 2
    assert _toml(selective_ac="op")["activation_checkpoint"] == {
        "mode": "selective", "selective_ac_option": "op"}  # fmt: skip
    assert _toml()["model"] == {"name": "llama3", "flavor": "8B"}


@pytest.mark.parametrize(
    "q",
    [{"layers": 30, "hidden": 1024, "heads": 16, "pp": 4},
     {"model": "llama3-405b", "pp": 16, "tp": 8, "dp": 8, "microbatches": 32,
      "schedule": "interleaved", "virtual_stages": 2},
     {"schedule": "zbv", "pp": 4, "microbatches": 8, "stage_layers": "4,4,4,4,4,4,3,5"}],
)  # fmt: skip
def test_model_parts_are_the_drawn_split_in_model_order(q):
    s = Scenario(**q)
    m = model_of(s)
    drawn = plan(s.schedule, s.pp, s.virtual_stages, m.layers, s.layer_split).split
    parts = _toml(**q)["parallelism"]["module_fqns_per_model_part"]
    assert [sum(x.startswith("layers.") for x in part) for part in parts] == list(drawn)
    flat = [x for part in parts for x in part]
    assert flat == ["tok_embeddings", *(f"layers.{i}" for i in range(m.layers)), "norm", "output"]


@pytest.mark.parametrize(
    "q,code",
    [
        ({"zero": 1}, "torchtitan_zero"),
        ({"dtype": "fp16"}, "torchtitan_fp16"),
        ({"sequence_parallel": False}, "torchtitan_no_sp"),
        ({"schedule": "zb-h2"}, "torchtitan_schedule"),
        ({"schedule": "zb-h1"}, "torchtitan_schedule"),
        ({"schedule": "dualpipe", "pp": 4, "microbatches": 8}, "torchtitan_schedule"),
        ({"recompute": "full", "recompute_layers": 1}, "torchtitan_recompute_layers"),
    ],
)
def test_what_torchtitan_cannot_run_is_refused_with_a_reason(q, code):
    e = export("torchtitan", Scenario(**q))
    assert not e.ok and e.code == code and e.text == "" and e.reason
