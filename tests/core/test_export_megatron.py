"""Megatron-LM export: every flag is one Megatron-LM core_v0.15.3's arguments.py defines
(export_fixtures/megatron_core_v0.15.3_flags.txt), the split it asks for is the split
meshscope draws, and what Megatron cannot run is refused, not mis-spelt."""

import re
import shlex
from pathlib import Path

import pytest

from app.core.export import export
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import model_of
from app.core.schedules.pipeline import plan

FIXTURES = Path(__file__).parent / "export_fixtures"
MEGATRON_FLAGS = {
    line.strip()
    for line in (FIXTURES / "megatron_core_v0.15.3_flags.txt").read_text().splitlines()
    if line.startswith("--")
}


def _flags(**q) -> dict[str, str | None]:
    e = export("megatron", Scenario(**q))
    assert e.ok, e.reason
    assert e.framework.version == "core_v0.15.3" and "arguments.py" in e.text.splitlines()[0]
    # As a shell reads it: comments dropped, backslash-newline a continuation.
    body = "\n".join(x for x in e.text.splitlines() if not x.startswith("#"))
    words = shlex.split(body.replace("\\\n", " "))
    out: dict[str, str | None] = {}
    for w in words:
        if w.startswith("--"):
            out[w], last = None, w
        else:
            out[last] = w
    return out


SWEEP = [
    {},
    {"schedule": "interleaved", "virtual_stages": 2, "pp": 4, "microbatches": 8},
    {"schedule": "interleaved", "virtual_stages": 3, "pp": 4, "microbatches": 6,
     "model": "gpt3-13b"},
    {"model": "llama3-405b", "pp": 16, "tp": 8, "dp": 8, "microbatches": 32,
     "schedule": "interleaved", "virtual_stages": 2},
    {"zero": 1, "overlap_grad_reduce": True, "overlap_param_gather": True, "tp_comm_overlap": True},
    {"zero": 3, "pp": 1, "overlap_grad_reduce": True, "recompute": "full"},
    {"zero": 2, "pp": 1, "dtype": "fp16", "recompute": "full", "recompute_layers": 2},
    {"model": "gpt3-1.3b", "recompute": "none", "vocab_multiple": 64, "tp": 1, "dp": 4},
    {"layers": 30, "hidden": 1024, "heads": 16, "pp": 4},
]  # fmt: skip


@pytest.mark.parametrize("q", SWEEP)
def test_every_flag_is_spelt_as_megatron_core_v0_15_3_spells_it(q):
    flags = _flags(**q)
    assert flags and set(flags) <= MEGATRON_FLAGS, set(flags) - MEGATRON_FLAGS


def test_the_parallel_and_batch_flags_carry_the_scenario():
    f = _flags(dp=4, tp=2, pp=4, schedule="interleaved", virtual_stages=2, microbatches=8,
               micro_batch_size=2, zero=1, overlap_grad_reduce=True, overlap_param_gather=True,
               tp_comm_overlap=True)  # fmt: skip
    assert f["--tensor-model-parallel-size"] == "2"
    assert f["--pipeline-model-parallel-size"] == "4"
    assert f["--num-virtual-stages-per-pipeline-rank"] == "2"
    assert f["--micro-batch-size"] == "2"
    assert f["--global-batch-size"] == str(2 * 8 * 4)  # micro x micro-batches x dp
    for switch in ("--sequence-parallel", "--use-distributed-optimizer", "--overlap-grad-reduce",
                   "--overlap-param-gather", "--tp-comm-overlap"):  # fmt: skip
        assert switch in f and f[switch] is None, switch
    assert f["--recompute-granularity"] == "selective"
    assert "--microbatch-group-size-per-virtual-pipeline-stage" not in f  # m % pp == 0


def test_model_shape_flags():
    f = _flags(model="llama3-70b")
    assert (f["--num-layers"], f["--hidden-size"], f["--num-attention-heads"]) == (
        "80",
        "8192",
        "64",
    )
    assert f["--num-query-groups"] == "8" and "--group-query-attention" in f
    assert f["--ffn-hidden-size"] == "28672" and "--swiglu" in f
    assert f["--position-embedding-type"] == "rope" and f["--seq-length"] == "8192"
    gpt = _flags(model="gpt3-1.3b", tp=1)
    assert "--swiglu" not in gpt and "--position-embedding-type" not in gpt
    assert "--sequence-parallel" not in gpt  # arguments.py turns SP off at tp = 1


def test_full_recompute_flags():
    assert _flags(recompute="full")["--recompute-method"] == "uniform"
    f = _flags(recompute="full", recompute_layers=3)
    assert (f["--recompute-granularity"], f["--recompute-method"], f["--recompute-num-layers"]) == (
        "full",
        "block",
        "3",
    )


def _megatron_layers(f: dict, layers: int, pp: int, v: int) -> list[int]:
    """Layers of each virtual stage in model order, by Megatron's rule: core_v0.15.3
    megatron/core/transformer/transformer_block.py get_num_layers_to_build (first/last stage
    counts, the rest even, each rank's count split evenly over its v chunks), or the layout
    (pipeline_parallel_layer_layout.parse_str_to_list: stages split by '|', t*n)."""
    if "--pipeline-model-parallel-layout" in f:
        text = re.sub(r"(.)\*(\d+)", lambda x: x.group(1) * int(x.group(2)),
                      f["--pipeline-model-parallel-layout"])  # fmt: skip
        return [stage.count("t") for stage in text.split("|")]
    first = f.get("--decoder-first-pipeline-num-layers")
    last = f.get("--decoder-last-pipeline-num-layers")
    rest, left = layers, pp
    for n in (first, last):
        if n is not None:
            rest, left = rest - int(n), left - 1
    per = [rest // left if left else 0] * pp
    if first is not None:
        per[0] = int(first)
    if last is not None:
        per[-1] = int(last)
    return [per[k % pp] // v for k in range(pp * v)]  # virtual stage k = chunk * pp + rank


@pytest.mark.parametrize(
    "q",
    [
        {"layers": 30, "hidden": 1024, "heads": 16, "pp": 4},  # 7,8,8,7: first and last
        {"layers": 31, "hidden": 1024, "heads": 16, "pp": 4},  # 7,8,8,8: first only
        {"layers": 32, "hidden": 1024, "heads": 16, "pp": 4, "stage_layers": "8,8,8,8"},
        {"layers": 32, "hidden": 1024, "heads": 16, "pp": 2, "stage_layers": "15,17"},
        {"layers": 32, "hidden": 1024, "heads": 16, "pp": 4, "stage_layers": "9,7,9,7"},
        {"model": "llama3-405b", "pp": 16, "tp": 8, "dp": 8, "microbatches": 32,
         "schedule": "interleaved", "virtual_stages": 2},
        {"layers": 48, "hidden": 1024, "heads": 16, "pp": 4, "microbatches": 8,
         "schedule": "interleaved", "virtual_stages": 2},
    ],
)  # fmt: skip
def test_the_split_megatron_builds_is_the_split_meshscope_draws(q):
    s = Scenario(**q)
    m = model_of(s)
    drawn = plan(s.schedule, s.pp, s.virtual_stages, m.layers, s.layer_split).split
    f = _flags(**q)
    assert _megatron_layers(f, m.layers, s.pp, s.chunks) == list(drawn)


def test_uneven_first_and_last_stages_use_decoder_first_last_flags():
    f = _flags(layers=30, hidden=1024, heads=16, pp=4)
    assert f["--decoder-first-pipeline-num-layers"] == "7"
    assert f["--decoder-last-pipeline-num-layers"] == "7"
    assert "--pipeline-model-parallel-layout" not in f


def test_interleaving_with_m_not_a_multiple_of_pp_names_torchs_round_as_the_group():
    # torch's (and the drawn) rounds: m // max(1, m // pp) = 6 micro-batches per chunk.
    f = _flags(pp=4, microbatches=6, schedule="interleaved", virtual_stages=2)
    assert f["--microbatch-group-size-per-virtual-pipeline-stage"] == "6"


@pytest.mark.parametrize(
    "q,code",
    [
        ({"schedule": "zbv", "microbatches": 4}, "megatron_schedule"),
        ({"schedule": "gpipe"}, "megatron_schedule"),
        ({"schedule": "zb-h2"}, "megatron_schedule"),
        ({"schedule": "dualpipe", "pp": 4, "microbatches": 8}, "megatron_schedule"),
        ({"schedule": "interleaved", "pp": 4, "microbatches": 2, "virtual_stages": 2},
         "megatron_interleaved_m"),
        ({"zero": 3, "pp": 2}, "megatron_fsdp_pp"),
        ({"selective_ac": "op"}, "megatron_selective_op"),
        ({"zero": 1, "overlap_param_gather": True}, "megatron_param_gather"),
    ],
)  # fmt: skip
def test_what_megatron_cannot_run_is_refused_with_a_reason(q, code):
    e = export("megatron", Scenario(**q))
    assert not e.ok and e.code == code and e.text == ""
    assert e.reason and e.as_dict()["cannot"]["code"] == code


def test_a_scenario_the_views_refuse_is_refused_here_too():
    with pytest.raises(ScenarioError) as err:
        export("megatron", Scenario(schedule="interleaved", virtual_stages=1))
    assert err.value.field == "virtual_stages"
