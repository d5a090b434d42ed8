"""Where templates/ and static/ live: inside the wheel (app.templates, app.static) or the repo."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent


def asset_dir(name: str) -> Path:
    """``templates`` or ``static``: the installed package's folder, else the checkout's."""
    spec = importlib.util.find_spec(f"app.{name}")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            if Path(location).is_dir():
                return Path(location)
    return _REPO / name
