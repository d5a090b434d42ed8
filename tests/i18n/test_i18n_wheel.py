"""The catalogues ship inside the wheel: an installed server reads the same files."""

import zipfile

import pytest
from wheel_build import build_wheel

from app.i18n import catalog


@pytest.mark.timeout(300)
def test_the_wheel_carries_every_catalogue(tmp_path):
    names = set(zipfile.ZipFile(build_wheel(tmp_path)).namelist())
    shipped = {f"app/i18n/locales/{p.name}" for p in catalog.DEFAULT_DIR.glob("*.json")}
    assert {"app/i18n/locales/en.json", "app/i18n/locales/zh.json"} <= shipped <= names
    assert "app/i18n/catalog.py" in names
