"""Every visible string, one JSON catalogue per language (``locales/<lang>.json``).

Templates call ``t(key)``; the page's JS gets its language's table embedded in the page, from
the same catalogue, so nothing is translated in two places. The functions here read the
shipped catalogues; routes use the app's own, ``request.app.state.i18n`` (app/main.py), which
settings may point at another folder. docs/i18n.md says how to add a language.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.i18n.catalog import Catalog, default, load

__all__ = ["LANGS", "Catalog", "default", "load", "strings", "translator"]


def strings(lang: str, quiz: bool = False) -> dict[str, str]:
    """The whole page table in one language; ``quiz=True`` adds the self-test's strings."""
    return default().strings(lang, quiz)


def translator(lang: str, quiz: bool = False) -> Callable[[str], str]:
    """``t(key)`` for templates; an unknown key shows itself, so a gap is visible, not blank."""
    return default().translator(lang, quiz)


def __getattr__(name: str) -> Any:
    # LANGS is the catalogue files present: read on first use, so importing does no I/O.
    if name == "LANGS":
        return default().langs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
