"""The MosaicML llm-foundry rows hold their source's inputs (issue 23).

Every H100 figure below is transcribed from mosaicml/llm-foundry
scripts/train/benchmarking/README.md, table 'H100 80GB BF16' (first published in b2a43a147,
unchanged at 8c8dd48f; Apache-2.0), one README row per board row: MicroBatchSize,
GradAccum, GlobalBatchSize, Throughput (T/s/GPU), MFU and NumParams, all with Precision
amp_bf16, MP Mode DEFAULT, Sharding Strategy FULL_SHARD, Activation Checkpointing False on
8 x h100_80gb. A row whose inputs drift from these fails here, not as a board figure.
"""

import pytest

from app.core.fidelity import board
from app.core.fidelity.published_runs import RUNS

# id: (seq, micro-batch, GradAccum, GlobalBatchSize, T/s/GPU, MFU %, NumParams)
H100_TABLE = {
    "llmfoundry-h10080gb-mpt1b-s2048-mb14": (2048, 14, 1, 112, 45455, 41.82, 1315950592),
    "llmfoundry-h10080gb-mpt1b-s4096-mb7": (4096, 7, 4, 224, 38535, 40.26, 1320144896),
    "llmfoundry-h10080gb-mpt1b-s8192-mb3": (8192, 3, 4, 96, 29157, 37.73, 1328533504),
    "llmfoundry-h10080gb-mpt1b-s32768-mb1": (32768, 1, 4, 32, 12025, 33.54, 1378865152),
    "llmfoundry-h10080gb-mpt760m-s2048-mb24": (2048, 24, 2, 384, 63147, 34.9, 760470528),
    "llmfoundry-h10080gb-mpt760m-s8192-mb6": (8192, 6, 2, 96, 41825, 34.84, 769907712),
}
BY_ID = {r.id: r for r in RUNS}
MOSAIC = [r for r in RUNS if r.source.startswith("MosaicML")]
# collect_results.py reads composer's GPU_AVAILABLE_FLOPS (callbacks/speed_monitor.py):
# h100-sxm bf16 1.979e15 / 2, A100 bf16 312e12.
PEAK = {"h100-sxm": 1.979e15 / 2, "a100-80g": 312e12, "a100-40g": 312e12}


def mpt_params(r) -> int:
    """MPT at llm-foundry v0.3.0 (learned_pos_emb True, no_bias False, tied head): per block
    12h^2 weights and 13h biases (Wqkv 3h, out h, up 4h, down h, two LayerNorms 4h), then
    the token table V x h, the position table s x h and the final LayerNorm 2h."""
    a = r.arch
    h = a.hidden
    assert a.ffn_hidden == 4 * h  # expansion_ratio 4
    return a.layers * (12 * h * h + 13 * h) + a.vocab * h + a.seq_len * h + 2 * h


def readme_mfu(r) -> float:
    """The README's 'MFU' section: (3 flops_per_seq + 3 attn_flops_per_seq) x samples/s over
    GPUs x peak, flops_per_seq = 2 N s, attn_flops_per_seq = 4 L h s^2; per GPU that is
    (6 N + 12 L h s) x tokens/s/GPU / peak."""
    a = r.arch
    per_token = 6 * mpt_params(r) + 12 * a.layers * a.hidden * a.seq_len
    return per_token * r.tokens_per_s_per_gpu / PEAK[r.hardware]


@pytest.mark.parametrize("run_id", sorted(H100_TABLE))
def test_each_h100_row_holds_its_readme_line(run_id):
    seq, micro, accum, gbs, tps, mfu, n = H100_TABLE[run_id]
    r = BY_ID[run_id]
    assert (r.hardware, r.gpus, r.dp, r.tp, r.pp) == ("h100-sxm", 8, 8, 1, 1)
    assert (r.arch.seq_len, r.micro_batch, r.global_batch) == (seq, micro, gbs)
    assert r.global_batch == r.gpus * micro * accum  # GlobalBatchSize = GPUs x mb x accum
    assert (r.tokens_per_s_per_gpu, r.mfu) == (tps, pytest.approx(mfu / 100))
    # amp_bf16, FULL_SHARD (ZeRO-3), no activation checkpointing, vocabulary unpadded
    assert (r.precision, r.zero, r.recompute) == ("bf16", "fsdp", "none")
    assert r.arch.vocab == 50368 and not r.arch.gated_mlp
    assert mpt_params(r) == n  # biases and learned positions included, head tied


@pytest.mark.parametrize("run_id", sorted(H100_TABLE))
def test_each_h100_row_is_priced_as_the_run_was_set_up(run_id):
    r, accum = BY_ID[run_id], H100_TABLE[run_id][2]
    s = board.scenario_of(r)
    # submit_benchmarks.py at b2a43a147: attn_impl 'triton' (FlashAttention-1's algorithm);
    # Composer's DEFAULT mixed precision reduces in fp32; FSDP prefetches the next block.
    assert s.flash_attention and s.flash_kernel == "fa1"
    assert s.zero == 3 and s.grad_reduce_fp32 and s.overlap_param_gather
    assert (s.recompute, s.dtype, s.hardware) == ("none", "bf16", "h100-sxm")
    assert (s.micro_batch_size, s.microbatches, s.dp) == (r.micro_batch, accum, 8)
    # The figure is tokens/s per GPU: the step is the global batch's tokens over all GPUs.
    tokens = r.global_batch * r.arch.seq_len
    assert board.published_step_s(r, s) == pytest.approx(tokens / (r.tokens_per_s_per_gpu * 8))


def test_every_mosaicml_row_has_the_mfu_its_throughput_implies():
    # The README's MFU from the row's own throughput, shape and GPU: a row whose sequence,
    # shape, throughput or hardware drifted from its table line no longer reproduces it.
    assert len(MOSAIC) == 24
    for r in MOSAIC:
        assert readme_mfu(r) == pytest.approx(r.mfu, abs=5e-4), r.id
        assert r.global_batch % (r.gpus * r.micro_batch) == 0, r.id
