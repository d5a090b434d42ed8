"""Issue 26 item 14: the Bearer value is stripped before the compare (app/api/ingest.py), so
an ingest token with whitespace around it could never match: the settings refuse it at
start, naming the setting and never echoing the secret."""

import pytest
from pydantic import ValidationError

from app.settings import Settings

SECRET = "s3cret-ingest-token-abcdef"


@pytest.mark.parametrize("token", [SECRET + " ", SECRET + "\n", " " + SECRET, SECRET + "\t"])
def test_a_token_with_surrounding_whitespace_is_refused_at_start(token, monkeypatch):
    with pytest.raises(ValidationError) as exc:
        Settings(ingest_token=token)
    assert "ingest_token" in str(exc.value) and "whitespace" in str(exc.value)
    assert SECRET not in str(exc.value)
    monkeypatch.setenv("MESHSCOPE_INGEST_TOKEN", token)  # as `meshscope serve` reads it
    with pytest.raises(ValidationError):
        Settings()


def test_a_token_with_whitespace_inside_is_still_a_token():
    assert Settings(ingest_token="two words, one token").ingest_token == "two words, one token"
