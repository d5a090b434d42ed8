"""Another git revision's tree, for the bench scripts that print this tree beside it: unpack
it into a folder, or run a snippet in it (stdin and stdout as JSON)."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def unpack(rev: str, into: Path, *paths: str) -> Path:
    """``rev``'s files (all of them, or only ``paths``) written under ``into``."""
    archive = subprocess.run(
        ["git", "archive", rev, *paths], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run_at(rev: str, code: str, stdin: Any) -> Any:
    """``code`` run by this Python in ``rev``'s app/, fed ``stdin`` as JSON; its JSON out."""
    with tempfile.TemporaryDirectory() as tmp:
        unpack(rev, Path(tmp), "app")
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp, input=json.dumps(stdin),
            capture_output=True, text=True, check=True, env={"PYTHONPATH": tmp},
        )  # fmt: skip
    return json.loads(done.stdout)
