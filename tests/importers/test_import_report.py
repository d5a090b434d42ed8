"""An import's report is keyed (app/importers/import_report.py), so /runs words it in the
page's language: the English text is the CLI's, the catalogue's ``live.import.<key>`` is each
template word for word in English and has the same placeholders in every language, and the
upload's answer carries the keys and params (``said``) beside the English ``summary``."""

import pytest
from test_refusal_keys import CJK, fields

from app import i18n
from app.importers.import_report import TEMPLATES, Report, line


@pytest.mark.parametrize("key", sorted(TEMPLATES))
def test_each_line_is_in_every_catalogue_with_its_placeholders(key):
    assert i18n.strings("en")[f"live.import.{key}"] == TEMPLATES[key]
    zh = i18n.strings("zh")[f"live.import.{key}"]
    assert fields(zh) == fields(TEMPLATES[key]) and CJK.search(zh)


def test_the_english_text_is_the_head_then_indented_lines_with_the_params_as_text():
    said = line("spans", spans="F 2, B 2")
    report = line("ranks_absent", count=3) + said + line("stored", stored=5, db="x.sqlite3")
    assert str(report) == (
        "ranks absent from the log(s): 3\n  spans: F 2, B 2\n  5 new record(s) stored in x.sqlite3"
    )
    assert report.said()[2] == {"key": "stored", "params": {"stored": "5", "db": "x.sqlite3"}}
    assert str(Report()) == ""


def test_a_line_missing_a_param_fails_where_it_is_made():
    with pytest.raises(KeyError):
        line("residual", residual_ms="1.0")


def test_ranks_past_the_eighth_are_counted_in_a_line_each_language_words():
    # "and 7 more" was part of the ranks param, so a zh page read it in English.
    from app.importers.import_report import no_file
    from app.live import event_text

    few, many = no_file([1, 2, 3], 4), no_file(list(range(1, 16)), 16)
    assert str(few) == "no file for rank(s) 1, 2, 3 of the 4: the run is stored as incomplete"
    assert str(many) == (
        "no file for rank(s) 1, 2, 3, 4, 5, 6, 7, 8 and 7 more of the 16: the run is stored as "
        "incomplete"
    )
    said = [event_text.line(f"live.import.{s['key']}", **s["params"]) for s in many.said()]
    zh = event_text.worded(said, i18n.strings("zh").get)
    assert zh == (
        "共 16 个 rank 中，rank 1, 2, 3, 4, 5, 6, 7, 8 及另外 7 个 rank 没有文件："
        "本次运行按不完整存储"
    )
