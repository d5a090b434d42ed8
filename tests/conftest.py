"""Shared fixtures: an app built by the factory and an in-process HTTP client."""

import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings


@pytest.fixture
def settings(tmp_path):
    return Settings(db=tmp_path / "meshscope.sqlite3", ingest_token="t" * 32)


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings)) as c:
        yield c
