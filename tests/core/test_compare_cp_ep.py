"""The factory comparison of a 5D base (issue 27): DP, TP and PP alone keep the base's GPU
count, so they run without its CP and EP (world = tp x cp x pp x dp counts cp)."""

from __future__ import annotations

import pytest

from app.core.evaluate import compare
from app.core.inputs.scenario import Scenario

pytestmark = pytest.mark.timeout(60)


def test_factory_members_alone_drop_cp_and_ep_and_keep_the_gpus():
    base = Scenario.model_validate(
        {"model": "mixtral-8x7b", "dp": 4, "tp": 2, "pp": 2, "cp": 2, "ep": 8,
         "order": "megatron-5d", "microbatches": 8}
    )  # fmt: skip
    dp_only, tp_only, pp_only, same = compare.expand_factory(base)
    assert same is base
    for member, axis in ((dp_only, "dp"), (tp_only, "tp"), (pp_only, "pp")):
        assert member.world_size == base.world_size == 32, axis
        assert (member.cp, member.ep) == (1, 1), axis
        assert getattr(member, axis) == 32, axis


def test_a_3d_factory_is_unchanged():
    base = Scenario.model_validate(dict(compare.TEACHING_BASE))
    members = compare.expand_factory(base)
    assert [(m.dp, m.tp, m.pp, m.cp, m.ep, m.microbatches) for m in members] == [
        (32, 1, 1, 1, 1, 1), (1, 32, 1, 1, 1, 32), (1, 1, 32, 1, 1, 32), (2, 4, 4, 1, 1, 16),
    ]  # fmt: skip
    # cp = ep = 1 are defaults: no share link gains a cp or ep key.
    assert all("cp" not in m.query() and "ep" not in m.query() for m in members)
