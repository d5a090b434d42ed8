"""The EP all-to-all across nodes (issue 27): each rank's bytes for peers off its node leave
through its own NIC share, not the node's NICs pooled as a ring's are (comm.all_to_all_s;
DeepEP README, SM90 CX7 EP 8x4: ~46 GB/s over RDMA per GPU). Inside a node it is the
all-to-all it always was, so single-node EP scenarios and every dense one are unchanged."""

from __future__ import annotations

import pytest

from app.core.cost import comm
from app.core.fidelity.board import row
from app.core.fidelity.published_runs import RUNS
from app.core.inputs.hardware import HARDWARE

H100 = HARDWARE["h100-sxm"]
E = H100.efficiency


def test_inside_one_node_it_is_the_plain_all_to_all():
    p = comm.Placement(size=8, per_domain=8)
    nbytes = 3.0e8
    assert comm.all_to_all_s(nbytes, p, H100, 2) == comm.all_gather_s(nbytes, p, H100, 2)


@pytest.mark.parametrize(("size", "per_domain"), [(16, 8), (32, 4), (64, 4)])
def test_across_nodes_the_remote_share_goes_at_one_nic_share(size, per_domain):
    p = comm.Placement(size=size, per_domain=per_domain)
    nbytes = 2.68e8
    remote = nbytes * (size - per_domain) / size / (H100.inter_gbps * 1e9 * E.inter_busbw_fraction)
    local = nbytes * (per_domain - 1) / size / (H100.intra_gbps * 1e9 * E.intra_busbw_fraction)
    expect = max(remote, local) + 2 * comm.ring_latency_s(p, H100)
    assert comm.all_to_all_s(nbytes, p, H100, 2) == pytest.approx(expect, rel=1e-12)
    # ~45 GB/s per GPU for the remote bytes: slower than the ring rule's pooled NICs, which
    # priced it at the NVLink rate once per_domain x 50 GB/s reached it.
    assert comm.all_to_all_s(nbytes, p, H100, 2) > comm.all_gather_s(nbytes, p, H100, 2)


def test_the_board_prices_multi_node_ep_rows_slower_and_single_node_ones_as_before():
    """Qwen3-30B-A3B on 16 H100s: EP 16 spans two nodes (Megatron-Bridge 26.04, TP1 PP1);
    EP 8 with PP 2 stays in one (26.02.01). Only the first pays the NIC-bound all-to-all."""
    by_id = {r.id: r for r in RUNS}
    two_nodes = row(by_id["bridge26.04-qwen3-30b-a3b-16"])
    one_node = row(by_id["bridge26.02.01-qwen3-30b-a3b-16"])
    assert two_nodes.predicted_s > one_node.predicted_s
    assert two_nodes.run.ep == 16 and one_node.run.ep == 8 and one_node.run.pp == 2


# Megatron-Bridge's H100 perf recipes of each release's time (their files and commits are in
# each row's caveat): moe_a2a_overlap=True from 25.11 on for Qwen3-235B-A22B, and for
# Qwen3-30B-A3B at PP 2 (25.11 to 26.02.01); 26.04's EP 16 recipe turns it off (HybridEP).
OVERLAPPED = {
    "bridge25.11-qwen3-30b-a3b-16", "bridge25.11-qwen3-235b-a22b-256",
    "bridge26.02-qwen3-30b-a3b-16", "bridge26.02.01-qwen3-30b-a3b-16",
    "bridge26.02-qwen3-235b-a22b-256", "bridge26.02.01-qwen3-235b-a22b-256",
    "bridge26.04-qwen3-235b-a22b-256", "bridge26.04.01-qwen3-235b-a22b-256",
}  # fmt: skip


def test_rows_whose_recipe_overlaps_the_all_to_all_say_so_with_the_recipe_line():
    moe = {r.id: r for r in RUNS if r.moe}
    assert set(moe) >= OVERLAPPED
    for rid in OVERLAPPED:
        caveat = moe[rid].caveat
        assert "moe_a2a_overlap=True" in caveat and "not priced" in caveat.replace(
            "neither priced", "not priced"
        ), rid
        assert "_H100_FP8_CS_" in caveat and " at " in caveat, rid
    for rid in set(moe) - OVERLAPPED:
        assert "moe_a2a_overlap=True" not in moe[rid].caveat, rid
