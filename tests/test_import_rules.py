"""The one-way import rules, as import-linter contracts (.importlinter): the core's stages
import only the stages below them, the core is pure, and the server never imports torch or
the probe. These tests run the contracts, and show that each can break."""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".importlinter"


def _lint_imports(config: Path) -> subprocess.CompletedProcess:
    # importlinter has no __main__; its console script is `lint-imports`.
    script = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(script), "--config", str(config)], cwd=ROOT, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def test_every_contract_is_kept():
    done = _lint_imports(CONFIG)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


def test_the_stages_are_the_core_packages_in_reading_order():
    """Every core package is in the layers contract, so a new one cannot slip past it."""
    config = configparser.ConfigParser()
    config.read(CONFIG)
    layers = config["importlinter:contract:core-stages"]["layers"].split()
    packages = sorted(
        f"app.core.{p.name}"
        for p in (ROOT / "app" / "core").iterdir()
        if (p / "__init__.py").exists()
    )
    assert sorted(layers) == packages
    assert layers[-1] == "app.core.support" and layers[0] == "app.core.fidelity"


def test_a_reversed_layering_is_reported_broken(tmp_path):
    """The contract can fail: the same layers read upside down break on today's imports."""
    config = configparser.ConfigParser()
    config.read(CONFIG)
    section = config["importlinter:contract:core-stages"]
    section["layers"] = "\n" + "\n".join(reversed(section["layers"].split()))
    for name in (
        "importlinter:contract:core-is-pure",
        "importlinter:contract:server-without-torch",
    ):
        config.remove_section(name)
    upside_down = tmp_path / ".importlinter"
    with upside_down.open("w") as f:
        config.write(f)
    done = _lint_imports(upside_down)
    assert done.returncode != 0 and "BROKEN" in done.stdout
