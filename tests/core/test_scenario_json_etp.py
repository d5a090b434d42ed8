"""The layout JSON's MoE parallel folding groups (issue 27): the expert-TP (etp) and
expert-DP (edp) groups the overview lights, present only when etp != tp.

Expected groups are worked by hand from Megatron-LM megatron/core/parallel_state.py
(initialize_model_parallel): the expert grid is RankGenerator(tp=etp, ep=ep,
dp=world // (etp * ep * pp), pp=pp, cp=1, order="tp-cp-ep-dp-pp"); _EXPERT_TENSOR_PARALLEL_GROUP
comes from its get_ranks('tp') and _EXPERT_DATA_PARALLEL_GROUP from its get_ranks('dp').

World 16, tp=4, dp=4, ep=4, etp=2, cp=pp=1, 8 GPUs a node: expert sizes [etp 2, ep 4, edp 2],
rank = t + 2e + 8d, so expert-TP [0,1], [2,3], ...; EP [0,2,4,6], [1,3,5,7], [8,..], [9,..];
expert-DP [r, r + 8] for r < 8, each across the two nodes.
"""

import pytest

from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.layout.topology import Layout
from app.core.views.scenario_json import layout_json

MEGATRON_5D = ("tp", "cp", "ep", "dp", "pp")


def _json(**kw) -> dict:
    return layout_json(Layout(order=MEGATRON_5D, gpus_per_node=8, **kw))


def test_etp_below_tp_sends_megatrons_expert_tp_and_expert_dp_groups():
    lay = _json(dp=4, tp=4, pp=1, ep=4, etp=2)
    assert lay["groups"]["etp"] == [[2 * i, 2 * i + 1] for i in range(8)]
    assert lay["groups"]["ep"] == [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]]
    assert lay["groups"]["edp"] == [[r, r + 8] for r in range(8)]
    assert lay["crosses_node"]["etp"] is False and lay["crosses_node"]["edp"] is True


def test_etp_1_with_pipeline_stages_folds_ep_over_tp_and_keeps_edp_within_a_stage():
    # tp=2, dp=4, pp=2, ep=4, etp=1 on 4-GPU nodes: expert sizes [etp 1, ep 4, edp 2, pp 2],
    # rank = e + 4d + 8p: EP groups of four consecutive ranks (two dense TP pairs), expert-DP
    # pairs 4 apart inside one stage of 8, each pair on two nodes.
    lay = layout_json(Layout(order=MEGATRON_5D, gpus_per_node=4, dp=4, tp=2, pp=2, ep=4, etp=1))
    assert lay["groups"]["etp"] == [[r] for r in range(16)]
    assert lay["groups"]["ep"] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    assert lay["groups"]["edp"] == [[0, 4], [1, 5], [2, 6], [3, 7], [8, 12], [9, 13], [10, 14],
                                    [11, 15]]  # fmt: skip
    assert lay["crosses_node"] == {"tp": False, "pp": True, "dp": True, "ep": False,
                                   "etp": False, "edp": True}  # fmt: skip


@pytest.mark.parametrize(("dp", "tp", "ep", "etp"), [(4, 4, 4, 2), (4, 2, 4, 1), (2, 4, 2, 1)])
def test_the_expert_groups_partition_the_world_and_multiply_to_tp_cp_dp(dp, tp, ep, etp):
    lay = _json(dp=dp, tp=tp, pp=2, ep=ep, etp=etp)
    world = lay["world_size"]
    for axis in ("etp", "edp", "ep"):
        flat = sorted(r for g in lay["groups"][axis] for r in g)
        assert flat == list(range(world)), axis
    size = len(lay["groups"]["etp"][0]) * len(lay["groups"]["ep"][0])
    assert size * len(lay["groups"]["edp"][0]) == tp * dp  # cp = 1: etp x ep x edp = tp x dp


def test_etp_equal_to_tp_sends_no_expert_groups_and_the_sizes_still_rebuild_the_layout():
    same = _json(dp=4, tp=2, pp=1, ep=2)
    assert "etp" not in same["groups"] and "edp" not in same["groups"]
    assert "edp" not in same["crosses_node"] and "etp" not in same["sizes"]
    folded = _json(dp=4, tp=4, pp=1, ep=4, etp=2)
    assert "edp" not in folded["sizes"]  # pages.article_view does Layout(**sizes)
    rebuilt = Layout(**folded["sizes"], order=MEGATRON_5D)
    assert rebuilt.groups("edp") == folded["groups"]["edp"]


def test_the_scenario_view_carries_the_groups_the_overview_reads():
    s = Scenario(model="mixtral-8x7b", tp=4, dp=4, pp=1, ep=4, etp=2, order="megatron-5d")
    lay = evaluate(s)["layout"]
    assert lay["groups"]["etp"][6] == [12, 13] and lay["groups"]["edp"][5] == [5, 13]
    plain = evaluate(Scenario(model="mixtral-8x7b", tp=4, dp=4, pp=1, ep=4, order="megatron-5d"))
    assert "edp" not in plain["layout"]["groups"]
