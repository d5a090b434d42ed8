"""Build the project's wheel from a copy of the tracked files only, as a stranger's checkout
would: a stale egg-info, build/ or untracked file in this tree cannot help it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_wheel(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for name in files:
        if not (ROOT / name).is_file():
            continue  # deleted in the work tree, not yet in a commit
        target = src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / name).read_bytes())
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(src)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("meshscope-*.whl")
    return wheel
