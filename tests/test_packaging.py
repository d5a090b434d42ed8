"""A non-editable install must serve pages: the wheel carries templates/ and static/."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(300)
def test_the_wheel_ships_pages_assets_and_the_console_script(tmp_path):
    src = tmp_path / "src"
    # Build from a copy of the tracked files, so a stale egg-info or build/ cannot help.
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in files:
        target = src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / name).read_bytes())
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(src)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("meshscope-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "app/templates/base.html" in names
    assert "app/templates/partials/formulas.html" in names
    assert "app/static/js/state.js" in names and "app/static/css/app.css" in names
    assert "gpu_probe/engine.py" in names and "app/core/simulate.py" in names
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "meshscope = app.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()
