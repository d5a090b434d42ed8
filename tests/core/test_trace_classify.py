"""Names -> span kinds (app/core/traces/classify.py)."""

import pytest

from app.core.traces.classify import action, comm_kind, group_ranks, phase


@pytest.mark.parametrize(
    "name, kind",
    [
        ("## forward ##", "F"),
        ("DistributedDataParallel.forward", "F"),
        ("## backward ##", "B"),
        ("autograd::engine::evaluate_function: MmBackward0", None),  # an op, not a range
        ("Optimizer.step#AdamW.step", "optim"),
        ("Optimizer.zero_grad#SGD.zero_grad", "optim"),
        ("## data_load ##", "data"),
        ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "data"),
        ("aten::mm", None),
    ],
)
def test_phase_ranges(name, kind):
    assert phase(name) == kind


def test_action_names_carry_microbatch_and_chunk():
    assert action("F3") == ("F", 3, None)
    assert action("W12.1") == ("W", 12, 1)
    assert action("B 0") == ("B", 0, None)
    assert action("Forward") is None and action("F") is None


def test_collective_names_and_group_ranks():
    assert [comm_kind(n) for n in ("send", "recv_", "allreduce", "_allgather_base", "wait")] == [
        "send",
        "recv",
        "coll",
        "coll",
        None,
    ]
    assert group_ranks("[4, 0, 2]") == (0, 2, 4) and group_ranks([1, 3]) == (1, 3)
    assert group_ranks("[]") is None and group_ranks("[a]") is None
