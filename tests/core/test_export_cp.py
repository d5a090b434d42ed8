"""The exports carry context parallelism with each framework's own name for it, and refuse
expert parallelism on a dense model (as every view does, naming ep) instead of emitting flags
a dense run would reject."""

import pytest

from app.core.export import export
from app.core.inputs.scenario import Scenario
from app.core.inputs.scenario_fields import ScenarioError
from tests.core.test_export_megatron import MEGATRON_FLAGS, _flags

tomllib = pytest.importorskip("tomllib")  # Python 3.11+, as test_export_torchtitan


def test_megatron_gets_its_context_parallel_size():
    flags = _flags(dp=2, tp=2, pp=2, cp=2, microbatches=4)
    assert flags["--context-parallel-size"] == "2" and set(flags) <= MEGATRON_FLAGS
    # Megatron's data-parallel size leaves CP out: global = micro x micro-batches x dp.
    assert flags["--global-batch-size"] == str(1 * 4 * 2)
    assert "--context-parallel-size" not in _flags(dp=2, tp=2, pp=2)


def test_torchtitan_gets_its_context_parallel_degree():
    q = dict(dp=2, tp=2, pp=2, cp=2, microbatches=4, sequence_parallel=True, zero=2)
    e = export("torchtitan", Scenario(**q))
    assert e.ok, e.reason
    table = tomllib.loads(e.text)
    assert table["parallelism"]["context_parallel_degree"] == 2


def test_expert_parallelism_on_a_dense_model_is_refused_by_both():
    s = Scenario(dp=2, tp=2, pp=1, cp=1, ep=2, sequence_parallel=True, zero=2)
    for fmt in ("megatron", "torchtitan"):
        with pytest.raises(ScenarioError) as err:
            export(fmt, s)
        assert (err.value.field, err.value.key) == ("ep", "scenario.ep_dense"), fmt
