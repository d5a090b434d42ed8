"""What one page makes the browser download of our own code: its module scripts, everything
they import (statically; the pages use no dynamic import), and its stylesheets. Plotly, the
vendored file, is not ours and is left out."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Pages name our files under the static tree's hash (/static/<hash>/js/x.js); the bare
# /static/js/x.js form is matched too.
ASSET = re.compile(r'(?:src|href)="/static/(?:[0-9a-f]{12}/)?((?:js|css)/[\w./-]+\.(?:js|css))"')
IMPORT = re.compile(r'(?:^|\n)\s*(?:import|export)\b[^;"\']*?["\'](\./[\w./-]+\.js)["\']')


def _module_graph(entry: Path) -> set[Path]:
    seen, todo = set(), [entry]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for rel in IMPORT.findall(path.read_text(encoding="utf-8")):
            todo.append((path.parent / rel).resolve())
    return seen


def page_files(html: str) -> set[Path]:
    """Our JS and CSS files that a page with this HTML loads."""
    files: set[Path] = set()
    for rel in ASSET.findall(html):
        path = (ROOT / "static" / rel).resolve()
        files |= _module_graph(path) if path.suffix == ".js" else {path}
    return files


def page_bytes(html: str) -> int:
    return sum(p.stat().st_size for p in page_files(html))
