"""What small models on one node need priced right: the FlashAttention generation a run used,
attention's matmuls as one batched kernel without flash, and the vocabulary Megatron pads."""

import pytest

from app.core.cost import compute
from app.core.cost.shapes import Gemm, padded_vocab
from app.core.evaluate.one_scenario import evaluate
from app.core.fidelity import board
from app.core.fidelity.published_runs import RUNS
from app.core.inputs.presets import HARDWARE, MODELS
from app.core.inputs.training import Training

M, HW = MODELS["gpt3-1.3b"], HARDWARE["a100-80g"]


def test_flashattention_1_runs_at_half_flashattention_2s_rate():
    fa2 = compute._attention_core_s(M, HW, Training(), 1)
    fa1 = compute._attention_core_s(M, HW, Training(flash_kernel="fa1"), 1)
    assert compute.FA1_SPEED == 0.5  # Dao 2023: "around 2x faster"
    assert fa1 == pytest.approx((fa2[0] * 2, fa2[1] * 2))


def test_attention_without_flash_is_one_batched_kernel_per_matmul():
    # 32 heads of a 2048 x 2048 x 64 product: one kernel fills the GPU as a GEMM of all
    # of them would; priced per head, each tiny GEMM ran far below the ceiling.
    per_head = Gemm(2048, 2048, 64, 32)
    batched = Gemm(2048, 2048, 64, 32, batched=True)
    assert compute.gemm_seconds(batched, HW, 2) < 0.7 * compute.gemm_seconds(per_head, HW, 2)
    big = Gemm(8192, 8192, 8192)
    assert compute.gemm_seconds(big, HW, 2) == compute.gemm_seconds(
        Gemm(8192, 8192, 8192, batched=True), HW, 2
    )
    explicit = Training(flash_attention=False)
    t = explicit.micro_batch_size * M.heads
    d = M.hidden // M.heads
    scores = Gemm(M.seq_len, M.seq_len, d, t, batched=True)
    assert compute._attention_core_s(M, HW, explicit, 1)[0] > compute.gemm_seconds(scores, HW, 2)


@pytest.mark.parametrize(
    ("vocab", "tp", "multiple", "padded"),
    [
        (128_256, 8, 128, 129_024),  # Llama 3 over TP 8: 768 dummy tokens
        (128_256, 1, 128, 128_256),  # already a multiple of 128
        (50_257, 1, 128, 50_304),  # GPT-2's BPE, Megatron's familiar 50,304
        (151_936, 4, 128, 152_064),
        (128_256, 8, 1, 128_256),  # no padding (torchtitan, Hugging Face)
    ],
)
def test_megatron_pads_the_vocabulary_to_a_multiple_of_128_times_tp(vocab, tp, multiple, padded):
    assert padded_vocab(vocab, tp, multiple) == padded


def test_padding_costs_memory_and_time_but_not_model_flops():
    from app.core.inputs.scenario import Scenario

    base = dict(model="llama3-8b", tp=8, pp=1, dp=1)
    padded, plain = evaluate(Scenario(**base)), evaluate(Scenario(**base, vocab_multiple=1))
    assert padded["memory"]["peak_bytes"] > plain["memory"]["peak_bytes"]
    assert padded["step_time_s"] > plain["step_time_s"]
    flops = "model_flops_per_iteration"  # MFU counts the model's own vocabulary
    assert padded["compute"][flops] == plain["compute"][flops]


def test_the_board_prices_each_source_with_the_flashattention_it_ran():
    kernels = {}
    for run in RUNS:
        if not board.left_out(run):
            kernels.setdefault(board.source_family(run), set()).add(
                board.scenario_of(run).flash_kernel
            )
    assert kernels["Dao"] == kernels["MosaicML"] == {"fa1"}
    assert kernels["NVIDIA"] == kernels["torchtitan"] == {"fa2"}
