"""The self-test's data: enough questions from both closing sections, well-formed answers,
and the URL state (answers, only) parsed, refused and spelled one way."""

import pytest
from pydantic import ValidationError

from app import i18n
from app.core.teach import quiz


def test_at_least_twelve_questions_cover_both_closing_sections():
    assert len(quiz.QUESTIONS) >= 12
    assert {q.section for q in quiz.QUESTIONS} == {"myth", "interview"}
    assert [q.id for q in quiz.QUESTIONS] == list(range(1, len(quiz.QUESTIONS) + 1))
    assert len({q.key for q in quiz.QUESTIONS}) == len(quiz.QUESTIONS)


@pytest.mark.parametrize("q", quiz.QUESTIONS, ids=lambda q: q.key)
def test_each_question_has_an_answer_reasoning_and_a_proof_in_both_languages(q):
    assert 0 <= q.answer < q.choices <= len(quiz.LETTERS)
    assert q.links, "every answer links to the scenario that proves it"
    keys = [f"quiz.{q.key}.q", f"quiz.{q.key}.why", *(link.label for link in q.links)]
    if not q.claim:
        keys += [f"quiz.{q.key}.c{i}" for i in range(q.choices)]
    for key in keys:
        en, zh = (i18n.strings(lang, quiz=True)[key] for lang in ("en", "zh"))
        assert en and zh and en != key


def test_claims_are_true_or_false_and_the_examples_are_false():
    myths = {q.key: q for q in quiz.QUESTIONS if q.claim}
    assert all(q.choices == 2 for q in myths.values())
    for key in ("dp_memory", "tp_nodes", "1f1b_bubble", "more_pp", "grad_accum"):
        assert myths[key].answer == quiz.FALSE


def test_answers_parse_into_picks_and_spell_back_in_question_order():
    query = quiz.QuizQuery(answers="9c,3b,1a")
    picks = quiz.picks(query)
    assert picks == {9: 2, 3: 1, 1: 0}
    assert quiz.encode(picks) == "1a,3b,9c"
    assert quiz.href(quiz.QuizQuery(lang="zh", only="1,3"), picks) == (
        "/quiz?lang=zh&only=1,3&answers=1a,3b,9c"
    )
    assert quiz.href(quiz.QuizQuery(), {}) == "/quiz"


def test_progress_counts_the_shown_questions_only():
    by_key = {q.key: q for q in quiz.QUESTIONS}
    right, wrong = by_key["1f1b_bubble"], by_key["gpus_sum"]
    answers = {right.id: right.answer, wrong.id: 1 - wrong.answer, 1: 0}
    query = quiz.QuizQuery(only=f"{right.id},{wrong.id}")
    assert quiz.progress(quiz.shown(query), answers) == {"total": 2, "answered": 2, "correct": 1}
    assert quiz.progress(list(quiz.QUESTIONS), {})["answered"] == 0


@pytest.mark.parametrize(
    ("kw", "field"),
    [({"answers": "99a"}, "answers"), ({"answers": "1d"}, "answers"),
     ({"answers": "2a,2b"}, "answers"), ({"only": "0"}, "only")],
)  # fmt: skip
def test_a_question_or_choice_that_does_not_exist_names_its_field(kw, field):
    query = quiz.QuizQuery(**kw)
    with pytest.raises(quiz.QuizError) as err:
        quiz.picks(query)
        quiz.shown(query)
    assert err.value.field == field


@pytest.mark.parametrize("kw", [{"answers": "1x"}, {"answers": "a1"}, {"only": "1;2"},
                                {"lang": "French"}, {"lang": "z h"}, {"extra": "1"}])  # fmt: skip
def test_malformed_values_are_refused_by_the_model(kw):
    with pytest.raises(ValidationError):
        quiz.QuizQuery(**kw)


def test_the_core_takes_any_well_formed_language_code_the_web_layer_checks_it():
    # Which codes have a catalogue is the app's to say (app/i18n/lang.py), not the core's.
    assert quiz.QuizQuery(lang="fr").lang == "fr"


def test_links_carry_the_language():
    link = quiz.QUESTIONS[0].links[0]
    assert link.href("zh").endswith("lang=zh") and "lang" not in link.href("en")
