"""Write static/fonts/cjk-subset.woff2 (and cjk-switch.woff2): Noto Sans CJK SC cut to the
CJK characters meshscope itself prints, so a box without Chinese fonts (a classroom PC, a
cluster's login node) shows the zh pages, and the 中文 button, as text instead of boxes.

    python tools/subset_cjk_font.py [--font /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc]

Needs fonttools and brotli (the dev extra) and Debian's fonts-noto-cjk (SIL OFL 1.1, whose
text ships beside the subset). tests/test_cjk_font.py fails when a new string needs a glyph
the subset lacks; rerun this then.
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FONT = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
SC_INDEX = 2  # the .ttc's faces: JP, KR, SC, TC, HK; SC is Simplified Chinese
OUT = ROOT / "static" / "fonts" / "cjk-subset.woff2"
# English pages print two CJK characters, the 中文 button: a face of just those keeps them
# from pulling the whole subset.
SWITCH = "中文"
SWITCH_OUT = ROOT / "static" / "fonts" / "cjk-switch.woff2"
# Intl.NumberFormat("zh-CN", {notation: "compact"}) prints these (CLDR zh.xml decimalFormats
# short: 0万, 0亿, 0万亿); they are in no source file, so fmt.js's "80.3亿" needs them listed.
COMPACT = "万亿"
# The zh catalogue holds nearly all of it; the .py, .html and .js catch text kept in code.
SOURCES = (("app", "*.py"), ("app/i18n/locales", "*.json"), ("templates", "*.html"),
           ("static/js", "*.js"))  # fmt: skip
# CJK radicals, punctuation, kana-free ideographs, full-width forms: what system-ui lacks.
RANGES = ((0x2E80, 0x2FDF), (0x3000, 0x303F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
          (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF))  # fmt: skip


def is_cjk(ch: str) -> bool:
    return any(lo <= ord(ch) <= hi for lo, hi in RANGES)


def needed(root: Path = ROOT) -> set[str]:
    """Every CJK character in the app's sources: the strings its pages can print."""
    chars: set[str] = set()
    for folder, pattern in SOURCES:
        for path in (root / folder).rglob(pattern):
            chars |= {ch for ch in path.read_text(encoding="utf-8") if is_cjk(ch)}
    return chars | set(COMPACT)


def subset(font: Path, chars: set[str], out: Path) -> None:
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTFont

    face = TTFont(font, fontNumber=SC_INDEX)
    options = ft_subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]  # keep vertical punctuation and locl forms
    options.name_IDs = ["*"]  # the copyright and licence names travel with the glyphs
    sub = ft_subset.Subsetter(options)
    sub.populate(unicodes=[ord(c) for c in sorted(chars)])
    sub.subset(face)
    out.parent.mkdir(parents=True, exist_ok=True)
    face.flavor = "woff2"
    face.save(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--font", type=Path, default=FONT)
    args = ap.parse_args()
    for chars, out in ((needed(), OUT), (set(SWITCH), SWITCH_OUT)):
        subset(args.font, chars, out)
        print(f"{len(chars)} characters -> {out.relative_to(ROOT)} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
