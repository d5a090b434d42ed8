"""Every rank's DeviceMesh coordinate and groups equal app.core.layout.topology's, for several
shapes and orders, and a mesh built in one order is refused for another."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from probe_support import ROOT, probe_env

from app.core.layout.topology import AXES, Layout

pytestmark = [pytest.mark.probe, pytest.mark.timeout(180)]

SHAPES = [  # (dp, tp, pp, order): up to 8 ranks
    (2, 2, 2, "tp-pp-dp"),
    (2, 2, 2, "tp-dp-pp"),
    (1, 2, 4, "pp-tp-dp"),
    (4, 2, 1, "dp-tp-pp"),
    (2, 1, 4, "pp-dp-tp"),
]


def test_mesh_matches_core_layout_for_several_shapes(tmp_path):
    script = Path(__file__).with_name("mesh_worker.py")
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path), json.dumps(SHAPES)],
        cwd=ROOT, env=probe_env(), capture_output=True, text=True, timeout=150,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for dp, tp, pp, order in SHAPES:
        layout = Layout(dp, tp, pp, tuple(order.split("-")))
        for rank in range(layout.world_size):
            seen = json.loads((tmp_path / f"{dp}x{tp}x{pp}-{order}-rank{rank}.json").read_text())
            coord = layout.coord(rank)
            for axis in AXES:
                group = layout.group(axis, rank)
                assert seen["coord"][axis] == coord.get(axis), (order, rank, axis)
                assert seen["groups"][axis] == group, (order, rank, axis)
                assert seen["sums"][axis] == float(sum(group)), (order, rank, axis)
            if "mismatch" in seen:
                assert seen["mismatch"] and f"rank {rank}" in seen["mismatch"]
