"""Every shipped catalogue has exactly the reference's keys, none blank, with the same format
placeholders; and the loader reads the languages from the files present."""

import json
import re
import shutil
from dataclasses import FrozenInstanceError

import pytest

from app import i18n
from app.i18n import catalog

PLACEHOLDER = re.compile(r"\{(\w*)\}")  # str.format's {0} / {name}, and JS fill()'s {name}


def problems(cat: catalog.Catalog) -> list[str]:
    """What keeps each language from matching the reference, one line per problem."""
    ref = cat.groups[catalog.REFERENCE]
    out = []
    for lang in cat.langs:
        groups = cat.groups[lang]
        if set(groups) != set(ref):
            out.append(f"{lang}: groups {sorted(set(groups) ^ set(ref))}")
        for name, texts in ref.items():
            mine = groups.get(name, {})
            out += [f"{lang}: {name} lacks {k}" for k in texts.keys() - mine.keys()]
            out += [f"{lang}: {name} has extra {k}" for k in mine.keys() - texts.keys()]
            for key in texts.keys() & mine.keys():
                if not mine[key].strip():
                    out.append(f"{lang}: {key} is blank")
                if set(PLACEHOLDER.findall(mine[key])) != set(PLACEHOLDER.findall(texts[key])):
                    out.append(f"{lang}: {key} placeholders differ")
    return out


def test_every_shipped_language_has_every_key_filled_with_the_same_placeholders():
    cat = i18n.default()
    assert cat.langs[0] == "en" and "zh" in cat.langs
    assert problems(cat) == []


def test_no_catalogue_file_repeats_a_key_json_would_silently_drop():
    # json.loads keeps a repeated key's last text; a merge that doubles lines would hide one.
    def no_repeats(pairs):
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), sorted({k for k in keys if keys.count(k) > 1})
        return dict(pairs)

    for path in catalog.DEFAULT_DIR.glob("*.json"):
        json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=no_repeats)


def test_the_checker_sees_a_missing_key_a_blank_text_and_a_lost_placeholder(tmp_path):
    en = json.loads((catalog.DEFAULT_DIR / "en.json").read_text(encoding="utf-8"))
    xx = json.loads(json.dumps(en))
    del xx["ui"]["nav.flow"]
    xx["ui"]["grid.title"] = " "
    xx["errors"]["err.greater_than"] = "more than ge"  # {gt} dropped
    _write(tmp_path, en=en, xx=xx)
    assert sorted(problems(catalog.load(tmp_path))) == [
        "xx: err.greater_than placeholders differ",
        "xx: grid.title is blank",
        "xx: ui lacks nav.flow",
    ]


def test_the_languages_are_the_files_present_reference_first(tmp_path):
    for name in ("zh.json", "en.json"):
        shutil.copy(catalog.DEFAULT_DIR / name, tmp_path / name)
    shutil.copy(catalog.DEFAULT_DIR / "en.json", tmp_path / "de.json")
    assert catalog.load(tmp_path).langs == ("en", "de", "zh")
    assert i18n.LANGS == ("en", "zh")  # the shipped folder's: en first, then the rest


def test_a_folder_without_the_reference_or_with_a_key_in_two_groups_is_refused(tmp_path):
    shutil.copy(catalog.DEFAULT_DIR / "zh.json", tmp_path / "zh.json")
    with pytest.raises(FileNotFoundError, match="en.json"):
        catalog.load(tmp_path)
    twice = tmp_path / "twice"
    _write(twice, en={"ui": {"a": "A"}, "flow": {"a": "A again"}})
    with pytest.raises(ValueError, match="more than one group"):
        catalog.load(twice)


def test_the_catalogue_is_read_once_and_cannot_be_changed():
    cat = catalog.load()
    assert catalog.load(catalog.DEFAULT_DIR) is cat is i18n.default()
    with pytest.raises(FrozenInstanceError):
        cat.langs = ("en",)
    with pytest.raises(TypeError):
        cat.groups["en"]["ui"]["nav.flow"] = "changed"
    copy = cat.strings("en")
    copy["nav.flow"] = "changed"  # a caller's copy, not the catalogue
    assert cat.strings("en")["nav.flow"] == "Flow"


def test_pages_tables_leave_the_self_tests_prose_to_the_pages_that_show_it():
    plain, full = i18n.strings("zh"), i18n.strings("zh", quiz=True)
    quiz_keys = {k for g in catalog.QUIZ_GROUPS for k in i18n.default().groups["zh"][g]}
    assert quiz_keys and not quiz_keys & set(plain) and set(full) == set(plain) | quiz_keys
    assert i18n.translator("zh")("no.such.key") == "no.such.key"  # a gap shows itself


def _write(folder, **catalogues):
    folder.mkdir(parents=True, exist_ok=True)
    for lang, groups in catalogues.items():
        text = json.dumps(groups, ensure_ascii=False)
        (folder / f"{lang}.json").write_text(text, encoding="utf-8")
