"""The tokens a formula card is made of.

A card's ``chain`` is a list of sides the page joins with "="; a side is a list of tokens,
each a string (symbols, operators, shown as they are) or ``{"v": number, "u": unit}``, which
the page formats by its unit: "n" number, "B" bytes, "s" seconds, "u" teaching units, "%" a
fraction, "pts" percentage points (signed), "flop" FLOPs, "flop/s", "tok/s". A cause is an
i18n key, its args (tokens) and its delta (a token), so closed form + causes = the figure.
"""

from __future__ import annotations

from typing import Any

Token = str | dict[str, Any]


def num(v: float, unit: str = "n") -> dict[str, Any]:
    return {"v": v, "u": unit}


def cause(key: str, delta: float, unit: str, *args: Token) -> dict[str, Any]:
    return {"key": key, "delta": num(delta, unit), "args": list(args)}
