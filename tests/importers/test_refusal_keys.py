"""An upload's refusals are keyed (app/core/traces/refusals.py), so /runs words them in the
page's language: each key's English template is the catalogue's ``err.trace.<key>`` word for
word, every language has it with the same placeholders, and POST /api/runs/import sends the
key as the 422 detail's ``type`` and the params (the file as the user named it, never the
server's private directory) as its ``ctx``."""

import io
import re
import string
import tarfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app import i18n
from app.core.traces.refusals import TEMPLATES, refuse
from app.i18n.errors import message
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(120)
TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
TOKEN = "refusal-test-token-0123456789"
CJK = re.compile(r"[\u4e00-\u9fff]")


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("key", sorted(TEMPLATES))
def test_each_key_is_in_every_catalogue_with_its_placeholders(key):
    assert i18n.strings("en")[f"err.trace.{key}"] == TEMPLATES[key]
    zh = i18n.strings("zh")[f"err.trace.{key}"]
    assert fields(zh) == fields(TEMPLATES[key]) and CJK.search(zh)


def test_refuse_says_the_english_template_filled():
    err = refuse("rank_again", file="b.json", rank=3, other="a.json")
    assert str(err) == "b.json: rank 3 again (also in a.json)"
    assert (err.key, err.params) == ("rank_again", {"file": "b.json", "rank": 3, "other": "a.json"})


def upload(c: TestClient, body: bytes, name: str):
    return c.post("/api/runs/import", params={"run": "up", "name": name}, content=body,
                  headers={"Authorization": f"Bearer {TOKEN}"})  # fmt: skip


def test_an_upload_refusal_is_keyed_and_worded_in_chinese(tmp_path):
    no_rank = (TRACES / "hta" / "distributed_info_not_found.json.gz").read_bytes()
    twice = io.BytesIO()
    with tarfile.open(fileobj=twice, mode="w") as tar:
        for folder in ("a", "b"):
            info = tarfile.TarInfo(f"{folder}/rank0.json")
            info.size = 2
            tar.addfile(info, io.BytesIO(b"{}"))
    s = Settings(db=tmp_path / "live.sqlite3", ingest_token=TOKEN)
    with TestClient(create_app(s)) as c:
        (detail,) = upload(c, no_rank, "rank7.json.gz").json()["detail"]
        assert detail["type"] == "trace.no_rank" and detail["ctx"] == {"file": "rank7.json.gz"}
        zh = message(detail, "zh", i18n.strings("zh"))
        assert zh.startswith("rank7.json.gz：") and "distributedInfo.rank" in zh and CJK.search(zh)
        assert message(detail, "en", i18n.strings("en")) == detail["msg"]
        # A tar member's refusal: its params name the archive and member as the user knows them.
        (detail,) = upload(c, twice.getvalue(), "set.tar").json()["detail"]
        assert detail["type"] == "trace.member_twice"
        assert detail["ctx"] == {"file": "set.tar:b/rank0.json", "name": "rank0.json",
                                 "other": "a/rank0.json"}  # fmt: skip
        assert "meshscope-upload-" not in str(detail)
        assert message(detail, "zh", i18n.strings("zh")).startswith("set.tar:b/rank0.json：")
        # An empty upload is keyed too; the route's own refusal.
        (detail,) = upload(c, b"", "a.log").json()["detail"]
        assert (detail["type"], detail["ctx"]) == ("trace.empty_upload", {"file": "a.log"})
