"""A non-editable install must serve pages: the wheel carries templates/ and static/."""

import zipfile
from pathlib import Path

import pytest
from wheel_build import build_wheel


@pytest.mark.timeout(300)
def test_the_wheel_ships_pages_assets_and_the_console_script(tmp_path):
    wheel = build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "app/templates/base.html" in names
    assert "app/templates/partials/formulas.html" in names
    assert "app/static/js/state.js" in names and "app/static/css/app.css" in names
    assert "gpu_probe/engine.py" in names and "app/core/simulate/timeline.py" in names
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "meshscope = app.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


@pytest.mark.timeout(300)
def test_the_wheel_carries_every_python_module_of_the_source_tree(tmp_path):
    # A subpackage missing from pyproject's list imports fine from the checkout
    # and crashes the installed app; compare the wheel with the tree itself.
    root = Path(__file__).resolve().parents[1]
    wheel = build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {
        p.relative_to(root).as_posix()
        for package in ("app", "gpu_probe")
        for p in (root / package).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert sources - names == set()
