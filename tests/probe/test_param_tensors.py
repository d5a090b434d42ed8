"""shapes.param_tensors counts what a one-tensor-at-a-time optimizer steps through: exactly
the tensors of the probe's own pipeline chunks."""

import pytest

torch = pytest.importorskip("torch")

from app.core.cost import shapes  # noqa: E402
from app.core.inputs.models import ModelSpec  # noqa: E402
from gpu_probe.config import ModelConfig  # noqa: E402
from gpu_probe.model import GPTChunk  # noqa: E402
from gpu_probe.tensor_parallel import TPComm  # noqa: E402
from gpu_probe.timing import NullTimer  # noqa: E402


@pytest.mark.parametrize(("layers", "nvstages"), [(4, 1), (4, 2), (6, 3)])
def test_param_tensors_is_the_probe_chunks_parameter_count(layers, nvstages):
    cfg = ModelConfig(layers=layers)
    spec = ModelSpec("probe", layers, cfg.hidden, cfg.heads, cfg.seq_len, cfg.vocab,
                     4 * cfg.hidden, tied_embeddings=False, learned_positions=True)  # fmt: skip
    for vs in range(nvstages):
        chunk = GPTChunk(cfg, vs, nvstages, TPComm(None, 1, 0, NullTimer()))
        counted = shapes.param_tensors(spec, layers // nvstages, vs == 0, vs == nvstages - 1)
        assert counted == len(list(chunk.parameters())), vs
