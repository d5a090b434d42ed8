"""Shared fixtures: an app built by the factory and an in-process HTTP client."""

import os
import warnings

import pytest

# TestClient requests say "Host: testserver"; the Host check (app/api/hosts.py) allows that
# name in tests only, never by default. Set before any Settings is built.
os.environ.setdefault("MESHSCOPE_ALLOWED_HOSTS", '["testserver"]')

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings


@pytest.fixture
def settings(tmp_path):
    return Settings(db=tmp_path / "meshscope.sqlite3", ingest_token="t" * 32)


@pytest.fixture(scope="session")
def fidelity_board():
    """One accuracy board for the whole session: its rows cost ~2 s of evaluate calls and are
    a pure function of the code, so every test's app may share them."""
    from app.api.fidelity import FidelityBoard

    return FidelityBoard()


@pytest.fixture
def client(settings, fidelity_board):
    app = create_app(settings)
    app.state.fidelity = fidelity_board  # the scenario cache's evaluator reads it per call
    with TestClient(app) as c:
        yield c
