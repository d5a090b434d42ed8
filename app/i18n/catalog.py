"""The translation catalogues: one JSON file per language, keys grouped by page.

``locales/<lang>.json`` is ``{group: {key: text}}``; a group is a page or an area (``ui``,
``fields``, ``flow``, ``compare``, ``live``, ``errors``, ``quiz`` ...). English is the
reference: the languages are the files present, ``en`` first. A key belongs to one group,
so a page's flattened table cannot depend on the order groups are read in.

``load(directory)`` reads a folder once (lru_cache) into a frozen ``Catalog``; the app factory
keeps the one its settings name, and routes read it from ``request.app.state.i18n``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

DEFAULT_DIR = Path(__file__).resolve().parent / "locales"
REFERENCE = "en"
# The self-test's prose (questions, reasonings, the article panel's path) is long and read
# only by the templates that show it, so it stays out of the table every page's JS embeds.
QUIZ_GROUPS = frozenset({"quiz", "quiz_questions"})

Table = Mapping[str, str]


@dataclass(frozen=True)
class Catalog:
    """Every language's strings, read-only; ``groups[lang][group][key]`` is one text."""

    directory: Path
    langs: tuple[str, ...]
    groups: Mapping[str, Mapping[str, Table]]
    # Flattened once at load: (lang, with the quiz's groups) -> {key: text}.
    tables: Mapping[tuple[str, bool], Table]

    def strings(self, lang: str, quiz: bool = False) -> dict[str, str]:
        """The page table in ``lang`` (a fresh dict: pages embed it as JSON, callers may add
        to it); ``quiz=True`` adds the self-test's groups."""
        return dict(self.table(lang, quiz))

    def table(self, lang: str, quiz: bool = False) -> Table:
        if lang not in self.langs:
            raise ValueError(f"no catalogue for {lang!r}; one of {', '.join(self.langs)}")
        return self.tables[(lang, quiz)]

    def translator(self, lang: str, quiz: bool = False) -> Callable[[str], str]:
        """``t(key)`` for templates; an unknown key shows itself, so a gap is visible."""
        table = self.table(lang, quiz)
        return lambda key: table.get(key, key)

    @property
    def context(self) -> dict[str, tuple[str, ...]]:
        """Pydantic validation context for ``app.i18n.lang.Lang`` fields."""
        return {"langs": self.langs}


def load(directory: Path | None = None) -> Catalog:
    """The catalogues in ``directory`` (default: the shipped ones), read once per folder."""
    return _load(Path(directory or DEFAULT_DIR).resolve())


def default() -> Catalog:
    return _load(DEFAULT_DIR)


@lru_cache(maxsize=8)
def _load(directory: Path) -> Catalog:
    files = {p.stem: p for p in sorted(directory.glob("*.json"))}
    if REFERENCE not in files:
        raise FileNotFoundError(f"{directory} has no {REFERENCE}.json, the reference catalogue")
    langs = (REFERENCE, *sorted(lang for lang in files if lang != REFERENCE))
    groups = {lang: _read(files[lang]) for lang in langs}
    tables = {
        (lang, quiz): _flatten(groups[lang], quiz) for lang in langs for quiz in (False, True)
    }
    return Catalog(directory, langs, MappingProxyType(groups), MappingProxyType(tables))


def _read(path: Path) -> Mapping[str, Table]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    ok = isinstance(raw, dict) and all(
        isinstance(g, dict) and all(isinstance(v, str) for v in g.values()) for g in raw.values()
    )
    if not ok:
        raise ValueError(f"{path}: expected {{group: {{key: text}}}}")
    return MappingProxyType({name: MappingProxyType(dict(g)) for name, g in raw.items()})


def _flatten(groups: Mapping[str, Table], quiz: bool) -> Table:
    out: dict[str, str] = {}
    for name, group in groups.items():
        if name in QUIZ_GROUPS and not quiz:
            continue
        clash = out.keys() & group.keys()
        if clash:
            raise ValueError(f"keys in more than one group: {sorted(clash)}")
        out.update(group)
    return MappingProxyType(out)
