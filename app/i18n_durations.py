"""Strings of the teaching-duration controls (f_time, b_time, w_time), in English and Chinese."""

from __future__ import annotations

DURATIONS: dict[str, tuple[str, str]] = {
    # One number, or one per stage: the hint fits the narrow input on a phone.
    "durations.placeholder": ("e.g. 1,1,2", "如 1,1,2"),
}
