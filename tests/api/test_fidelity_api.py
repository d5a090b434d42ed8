"""/api/fidelity and /fidelity: the accuracy board computed once per app, and the error band
every scenario's view carries beside its step time."""

import re
import threading
import time
import warnings
from urllib.parse import urlencode

import pytest
from page_html import page_data

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

from app import i18n
from app.api.fidelity import FidelityBoard
from app.core.fidelity import bands as fidelity_bands
from app.core.fidelity import board as fidelity
from app.core.fidelity import fit
from app.core.inputs.scenario import Scenario
from app.main import create_app


@pytest.fixture(scope="module")
def core_rows():
    """The core's own rows (in-sample and held out), computed here, apart from any app's board."""
    return fit.board_rows()


@pytest.fixture
def board(client):
    return client.get("/api/fidelity").json()


def test_the_summary_is_the_cores(board, core_rows):
    predicted = [r for r in core_rows if not r.reason]
    assert board["summary"]["model"] == fidelity.summary([r.error for r in predicted])
    assert board["summary"]["baseline"] == fidelity.summary([r.baseline_error for r in predicted])
    held = fidelity.summary([r.held_out_error for r in predicted])
    assert board["summary"]["held_out"] == held and held["rows"] == len(predicted)
    assert (board["runs"], board["predicted"]) == (len(core_rows), len(predicted))
    families = {fidelity.source_family(r.run) for r in predicted}
    assert [s["family"] for s in board["sources"]] == sorted(families)
    for src in board["sources"]:
        mine = [r for r in predicted if fidelity.source_family(r.run) == src["family"]]
        assert src["model"] == fidelity.summary([r.error for r in mine])
        assert src["baseline"] == fidelity.summary([r.baseline_error for r in mine])
        assert src["held_out"] == fidelity.summary([r.held_out_error for r in mine])
    assert sum(x["rows"] for x in board["left_out"]) == len(core_rows) - len(predicted)


def test_every_row_has_both_times_and_its_error_or_the_reason_it_is_left_out(board, core_rows):
    assert len(board["rows"]) == len(core_rows)
    for r, core in zip(board["rows"], core_rows, strict=True):
        assert r["source"] == core.run.source and r["url"] == core.run.url
        assert {"model", "shape", "hardware", "gpus", "tp", "pp", "dp", "schedule", "vpp",
                "micro_batch", "recompute", "precision"} <= set(r)  # fmt: skip
        if r["reason"]:
            assert r["predicted_s"] is None and r["query"] is None and r["reason_code"] != "other"
            continue
        assert r["published_s"] > 0 and r["predicted_s"] > 0 and r["baseline_s"] > 0
        assert r["error"] == pytest.approx((r["predicted_s"] - r["published_s"]) / r["published_s"])
        assert r["baseline_error"] == core.baseline_error


def test_each_rows_query_is_the_scenario_that_predicts_its_step_time(client, board):
    small = [r for r in board["rows"] if not r["reason"] and r["gpus"] <= 64]
    assert len(small) >= 5
    for r in small:
        view = client.get("/api/scenario", params=r["query"]).json()
        assert view["step_time_s"] == r["predicted_s"], r["source"]


def test_the_board_is_computed_once_per_app_however_many_ask_at_once(settings, core_rows):
    calls = []

    def compute():
        calls.append(threading.get_ident())
        time.sleep(0.2)  # long enough that every thread below arrives while it runs
        return core_rows

    app = create_app(settings)
    app.state.fidelity = FidelityBoard(compute)
    asks = [app.state.fidelity.report, app.state.fidelity.rows] * 4
    threads = [threading.Thread(target=f) for f in asks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with TestClient(app) as client:
        for path in ("/api/fidelity", "/fidelity", "/fidelity?lang=zh", "/api/scenario?dp=4", "/"):
            assert client.get(path).status_code == 200, path
    assert len(calls) == 1


def test_no_board_is_computed_until_something_asks(settings):
    calls = []
    app = create_app(settings)
    app.state.fidelity = FidelityBoard(lambda: calls.append(1) or [])
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
    assert calls == []


def test_the_openapi_document_describes_it(client):
    doc = client.get("/openapi.json").json()
    op = doc["paths"]["/api/fidelity"]["get"]
    assert "published" in op["summary"]
    schema = op["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema["$ref"].endswith("/FidelityReport")
    assert "/fidelity" not in doc["paths"]  # the page is not an API


# --- the band beside every predicted step time -----------------------------------------------


def test_the_scenario_api_and_the_pages_carry_the_cores_band(client, core_rows):
    query = {"hardware": "a100-80g", "dp": "4", "tp": "2", "pp": "2", "sequence_parallel": "false"}
    expected = fidelity_bands.band_for(core_rows, Scenario.model_validate(query))
    assert expected["validated"] and expected["held_out"] and expected["rows"] >= 3
    assert client.get("/api/scenario", params=query).json()["error_band"] == expected
    for path in ("/", "/flow"):
        assert page_data(client.get(f"{path}?{urlencode(query)}").text)["model"]["error_band"] == (
            expected
        )


def test_hardware_without_validated_rows_says_so(client):
    for hw in ("b200", "mi300x"):
        band = client.get(f"/api/scenario?hardware={hw}").json()["error_band"]
        assert band == {"validated": False, "reason": "hardware", "hardware": hw}


def test_each_compared_scenario_carries_its_band(client, core_rows):
    body = client.get(
        "/api/compare?s=hardware%3Da100-80g%26tp%3D1%26pp%3D1&s=hardware%3Db200"
    ).json()
    a100, b200 = body["members"]
    assert a100["summary"]["fits"] is False  # 8B on two A100s, unsharded: no band
    assert a100["error_band"] == fidelity_bands.band_for(
        core_rows, Scenario(hardware="a100-80g", tp=1, pp=1), fits=False
    )
    assert b200["error_band"]["validated"] is False
    page = page_data(client.get("/compare?preset=factory&hardware=a100-80g").text)
    assert all("error_band" in m for m in page["comparison"]["members"] if m["valid"])


# --- the page --------------------------------------------------------------------------------


def rows_of(html: str, table: str) -> list[str]:
    body = re.search(rf'<table[^>]*id="{table}".*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return re.findall(r"<tr\b.*?</tr>", body, re.S)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_the_summary_the_sources_and_every_row(client, board, lang):
    page = client.get(f"/fidelity?lang={lang}")
    assert page.status_code == 200
    t = i18n.strings(lang)
    for key in ("fid.title", "fid.card.median", "fid.sources.title", "fid.left.title"):
        assert t[key] in page.text, key
    # The headline is held out; the in-sample figure stands beside it.
    held, in_sample = (
        "{:.1%}".format(board["summary"][k]["median_abs"]) for k in ("held_out", "model")
    )
    card = re.search(r'id="card-median".*?</div>', page.text, re.S).group(0)
    assert re.search(rf'class="big" data-figure="held-out">{re.escape(held)}<', card)
    assert t["fid.in_sample_is"].replace("{v}", in_sample) in card
    assert len(rows_of(page.text, "sources-table")) == len(board["sources"])
    assert len(rows_of(page.text, "rows-table")) == board["predicted"]
    assert len(rows_of(page.text, "left-table")) == board["runs"] - board["predicted"]
    assert 'data-nav="fidelity"' in page.text and 'aria-current="page">' + t["nav.fidelity"] in (
        page.text
    )


def test_the_chinese_page_shows_no_english_label_of_its_own(client):
    page = client.get("/fidelity?lang=zh").text
    en, zh = i18n.strings("en"), i18n.strings("zh")
    for key in en:
        if key.startswith("fid.") and en[key] != zh[key] and "{" not in en[key]:
            assert f">{en[key]}<" not in page, key


def test_each_predicted_row_links_to_its_scenario_in_the_pages_language(client, board):
    for lang, suffix in (("en", {}), ("zh", {"lang": "zh"})):
        html = client.get(f"/fidelity?lang={lang}").text
        hrefs = re.findall(r'<a href="([^"]+)" data-open="scenario">', html)
        predicted = [r for r in board["rows"] if not r["reason"]]
        expected = ["/?" + urlencode({**r["query"], **suffix}) for r in predicted]
        assert [h.replace("&amp;", "&") for h in hrefs] == expected


def test_rows_sort_by_the_urls_column_and_order(client, board):
    html = client.get("/fidelity?sort=error&order=desc").text
    shown = [float(x) for x in re.findall(r'data-error="([^"]+)"', html)]
    assert [abs(e) for e in shown] == sorted((abs(e) for e in shown), reverse=True)
    assert 'aria-sort="descending"' in html
    # The sorted column's header flips the order; the others sort ascending.
    assert 'href="/fidelity?sort=error#rows" data-sort="error"' in html
    assert 'href="/fidelity?sort=gpus#rows" data-sort="gpus"' in html
    zh = client.get("/fidelity?sort=gpus&lang=zh").text
    gpus = [int(x) for x in re.findall(r'<tr data-gpus="(\d+)"', zh)]
    assert len(gpus) == board["predicted"] and gpus == sorted(gpus)
    assert 'href="/fidelity?sort=gpus&amp;order=desc&amp;lang=zh#rows"' in zh


def test_a_bad_parameter_is_a_422_with_the_reason_and_the_board_still_shown(client):
    page = client.get("/fidelity?sort=bogus&x=1")
    assert page.status_code == 422
    assert "<li><code>sort</code>" in page.text and "<li><code>x</code>" in page.text
    assert rows_of(page.text, "rows-table")  # the unsorted board, not an empty page
