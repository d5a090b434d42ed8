"""Property-based fuzzing of the OpenAPI: no input may produce a server error."""

import warnings

import schemathesis
from hypothesis import HealthCheck, settings

from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    schema = schemathesis.openapi.from_asgi(
        "/openapi.json", create_app(Settings(ingest_token="t" * 32))
    )


@schema.include(path_regex="^/api/(scenario|plan)$").parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case):
    response = case.call()
    assert response.status_code < 500, response.text
    if case.method.upper() == "GET":
        assert response.status_code in (200, 422), case.as_curl_command()
