"""Strings of DualPipe's controls (the overlapped F&B pair's time), in English and Chinese."""

from __future__ import annotations

DUALPIPE: dict[str, tuple[str, str]] = {
    "field.fb_time": (
        "F&B pair time, DualPipe(V) (teaching units)",
        "DualPipe(V) 重叠前反向对时间（教学单位）",
    ),
}
