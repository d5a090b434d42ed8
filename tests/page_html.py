"""Reading a server-rendered page in tests: its embedded state and the errors beside controls."""

from __future__ import annotations

import json
import re

PAGE_DATA = re.compile(r'<script type="application/json" id="page-data">(.*?)</script>', re.S)


def page_data(html: str) -> dict:
    return json.loads(PAGE_DATA.search(html).group(1))


def error_beside(html: str, field: str) -> str:
    found = re.search(rf'data-err-for="{field}">([^<]*)</output>', html)
    return found.group(1) if found else ""
