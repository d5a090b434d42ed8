"""/api/compare as NDJSON lines and the /compare page of a big preset (issue 28, "fast at
real sizes"): the lines carry exactly the JSON answer, a refusal is still a 422 before any
line, a gzipped stream can be inflated line by line as it comes, and the page of a big preset
is sent at once, without the comparison, which its script then streams."""

import json
import zlib
from urllib.parse import urlencode

import pytest
from page_html import page_data

from app.api import compare_stream
from app.core.evaluate import compare

LINES = {"Accept": compare_stream.NDJSON}
SMALL = "preset=schedules&pp=4&microbatches=8"
# 11 schedules at pp=8 x 64 micro-batches: over the light bound, so the page streams it.
BIG = "preset=schedules&pp=8&microbatches=64&virtual_stages=2"


def parse_lines(text: str) -> list[dict]:
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_the_lines_are_the_json_answer_piece_by_piece(client):
    whole = client.get(f"/api/compare?{SMALL}").json()
    res = client.get(f"/api/compare?{SMALL}", headers=LINES)
    assert res.status_code == 200
    assert res.headers["content-type"].startswith(compare_stream.NDJSON)
    lines = parse_lines(res.text)
    assert [next(iter(x)) for x in lines] == ["head"] + ["member"] * 11 + ["tail"]
    members = [x["member"] for x in lines[1:-1]]
    tail = lines[-1]["tail"]
    for v in tail.pop("verdicts"):
        members[v["index"]].update(v)
    again = {**lines[0]["head"], "members": members, **tail}
    assert json.dumps(again, sort_keys=True) == json.dumps(whole, sort_keys=True)
    # The error band is the same as the JSON answer's, so a streamed column says as much.
    assert all("error_band" in m for m in members if m["valid"])


def test_a_refused_scenario_is_a_422_before_any_line(client):
    query = urlencode([("s", "dp=2"), ("s", "tp_comm_overlap=true&sequence_parallel=false")])
    res = client.get(f"/api/compare?{query}", headers=LINES)
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"] == ["query", "s", 1, "tp_comm_overlap"]
    bad = client.get("/api/compare?preset=schedules&dp=0", headers=LINES)
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "dp"]


def test_a_gzipped_stream_inflates_line_by_line(fidelity_board):
    req = compare.parse([("preset", "factory"), ("pp", "4")])
    chunks = list(compare_stream.lines(req, compare.HARDWARE, fidelity_board, gzipped=True))
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pieces = [inflate.decompress(c) for c in chunks]
    # Every chunk but the gzip trailer inflates to whole lines: nothing waits for the next.
    assert all(p.endswith(b"\n") and p.count(b"\n") == 1 for p in pieces[:-1])
    assert pieces[-1] == b"" and inflate.eof
    assert len(pieces) - 1 == 1 + len(req.members) + 1


def test_the_server_gzips_the_stream_itself(client):
    res = client.get(f"/api/compare?{SMALL}", headers={**LINES, "Accept-Encoding": "gzip"})
    assert res.headers["content-encoding"] == "gzip"  # once: httpx inflated it
    assert len(parse_lines(res.text)) == 13
    plain = client.get(f"/api/compare?{SMALL}", headers={**LINES, "Accept-Encoding": "identity"})
    assert plain.headers["content-encoding"] == "identity" and plain.text == res.text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_big_preset_page_comes_without_the_comparison(client, lang):
    res = client.get(f"/compare?{BIG}&lang={lang}")
    assert res.status_code == 200
    data = page_data(res.text)
    cmp = data["comparison"]
    assert cmp["members"] is None and cmp["count"] == 11 and cmp["preset"] == "schedules"
    assert cmp["urlquery"][0] == ["preset", "schedules"]
    assert "cmp.progress" in data["strings"]
    small = page_data(client.get(f"/compare?{SMALL}&lang={lang}").text)["comparison"]
    assert len(small["members"]) == 11  # a small one is still embedded: drawn before any fetch
