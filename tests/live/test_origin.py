"""Viewer Origin rules: own origin and the allow-list in, foreign and rebinding pages out."""

import pytest

from app.live.origin import origin_allowed


@pytest.mark.parametrize(
    "origin,host,ok",
    [
        (None, "127.0.0.1:8000", True),  # not a browser
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://localhost:8000", "localhost:8000", True),
        ("http://[::1]:8000", "[::1]:8000", True),
        ("http://evil.example", "127.0.0.1:8000", False),
        ("http://evil.example:8000", "evil.example:8000", False),  # DNS rebinding
        ("http://127.0.0.1:9999", "127.0.0.1:8000", False),  # another local app
        ("null", "127.0.0.1:8000", False),
        ("https://dash.example.org", "dash.example.org", True),  # allow-listed
        ("https://dash.example.org/", "x", True),
    ],
)
def test_origins(origin, host, ok):
    assert origin_allowed(origin, host, "127.0.0.1", ["https://dash.example.org"]) is ok
