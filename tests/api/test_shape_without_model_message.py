"""/api/scenario?seq_len=4096 (a hand-written link, no model=) reads as model=custom, and
answered only "a custom model needs layers, hidden and heads; layers is missing" to someone
who never asked for a custom model. The refusal now says why it is custom and how to keep
the preset; zh says the same."""

from fastapi.testclient import TestClient

from app import i18n
from app.i18n.errors import message
from app.main import create_app
from app.settings import Settings


def test_a_shape_field_without_model_says_how_to_keep_the_preset(tmp_path):
    app = create_app(Settings(db=tmp_path / "live.sqlite3"))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        (detail,) = c.get("/api/scenario", params={"seq_len": 4096}).json()["detail"]
        assert detail["loc"] == ["query", "layers"]
        assert "without model= means model=custom" in detail["msg"]
        assert "model=llama3-8b&seq_len=4096" in detail["msg"]
        zh = message(detail, "zh", i18n.strings("zh"))
        assert "自定义模型" in zh and "model=预设名" in zh
        ok = c.get("/api/scenario", params={"seq_len": 4096, "model": "llama3-8b"})
        assert ok.status_code == 200
