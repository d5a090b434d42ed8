"""What a framework's own code did at a row's commit, which the row's model card does not say:
LitGPT trains an untied output layer even for tied checkpoints (Gemma); torchtrain's April
2024 per-op SAC list named the legacy reduce-scatter op DTensor no longer dispatched; FSDP
reduce-scatters the root unit's gradients (embedding and head) only at the end of the
backward. Each test fails without the mechanism it names."""

from app.core.evaluate import prepare
from app.core.fidelity import memory_board as board
from app.core.fidelity import memory_loader as loader
from app.core.inputs.scenario import Scenario

GIB = 1 << 30
ROWS = {r.id: r for r in loader.load()}
GEMMA = "litgpt-gemma-2b-full-4xa10g"


def _allocated(s: Scenario) -> float:
    stages = prepare(s, board.REGISTRY)[2].sections["memory"]["per_stage"]
    return max(st["allocated_bytes"] for st in stages)


def test_litgpt_trains_gemma_with_an_untied_head():
    row = ROWS[GEMMA]
    assert row.model.tied_embeddings is True  # the checkpoint's own card ties them
    s = board.scenario_of(row)
    assert s.tied_embeddings is False
    tied = s.model_copy(update={"tied_embeddings": True})
    # The head is a second 256,000 x 2,048 matrix (0.52e9 parameters): its bf16 weight and
    # AdamW's two bf16 states sharded over 4 ranks, its gradient whole under no_sync.
    head = 256_000 * 2_048
    at_least = head * (2 / 4 + 4 / 4 + 2)
    assert _allocated(s) - _allocated(tied) >= 0.99 * at_least
