"""The session-wide launch cache shared by the probe test files (helpers: probe_support)."""

import pytest
from probe_support import Launch, launch


@pytest.fixture(scope="session")
def launches(tmp_path_factory):
    """Memoised launches shared by test files: key -> Launch."""
    cache: dict[str, Launch] = {}

    def get(key: str, args: list[str], timeout_s: float = 120) -> Launch:
        if key not in cache:
            out = tmp_path_factory.mktemp(key.replace(" ", "_"))
            cache[key] = launch(args + ["--dump-params", str(out / "params")], out, timeout_s)
        return cache[key]

    return get
