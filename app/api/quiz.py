"""GET /api/quiz and GET /quiz: the self-test, its answers and progress from the URL.

The page is rendered whole on the server (answered questions show their reasoning), so a
shared link shows the same set and progress before any script runs; ``static/js/quiz.js``
only answers in place without a reload. A bad ``answers``/``only``/``lang`` is a 422 naming
the field, on the API and on the page (which then shows the questions unanswered).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from app import errors, i18n
from app.api.page_data import errors_by_field, reason_text, respond
from app.core.teach import quiz
from app.i18n.lang import Lang, checked
from app.paths import asset_dir


def question_json(
    q: quiz.Question, lang: str, picked: int | None, catalog: i18n.Catalog | None = None
) -> dict[str, Any]:
    """One question in one language (from the app's catalogue, else the shipped one): texts,
    the answer, its reasoning and its proofs."""
    t = (catalog or i18n.default()).translator(lang, quiz=True)
    labels = (
        [t("quiz.true"), t("quiz.false")]
        if q.claim
        else [t(f"quiz.{q.key}.c{i}") for i in range(q.choices)]
    )
    return {
        "id": q.id,
        "key": q.key,
        "section": q.section,
        "text": t(f"quiz.{q.key}.q"),
        "choices": [{"letter": quiz.LETTERS[i], "text": s} for i, s in enumerate(labels)],
        "answer": quiz.LETTERS[q.answer],
        "why": t(f"quiz.{q.key}.why"),
        "links": [{"label": t(link.label), "href": link.href(lang)} for link in q.links],
        "picked": None if picked is None else quiz.LETTERS[picked],
    }


def evaluate(query: quiz.QuizQuery, catalog: i18n.Catalog | None = None) -> dict[str, Any]:
    """The self-test for this URL; raises QuizError naming the field."""
    answers, questions = quiz.picks(query), quiz.shown(query)
    return {
        "questions": [question_json(q, query.lang, answers.get(q.id), catalog) for q in questions],
        "progress": quiz.progress(questions, answers),
        "href": quiz.href(query, answers),
    }


class QuizPage(quiz.QuizQuery):
    """The page's query: the core's, with ``lang`` one of the app catalogue's languages."""

    lang: Lang = "en"


def _page_state(
    params: dict[str, str], catalog: i18n.Catalog
) -> tuple[quiz.QuizQuery, dict[str, Any], dict[str, str]]:
    """The page's query, view and errors; on an error, the questions unanswered."""
    errs: dict[str, str] = {}
    try:
        query: quiz.QuizQuery = QuizPage.model_validate(params, context=catalog.context)
    except ValidationError as exc:
        errs = errors_by_field(exc, str(params.get("lang", "en")), catalog)
        lang = params.get("lang") if params.get("lang") in catalog.langs else "en"
        query = quiz.QuizQuery(lang=lang)
    try:
        view = evaluate(query, catalog)
    except quiz.QuizError as exc:
        errs[exc.field] = reason_text(exc, query.lang, catalog)
        query = quiz.QuizQuery(lang=query.lang)
        view = evaluate(query, catalog)
    return query, view, errs


def make_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    router = APIRouter()

    @router.get(
        "/api/quiz",
        tags=["quiz"],
        summary="The self-test: questions, answers with reasoning, proofs, and progress",
        responses={422: {"description": "`detail[].loc` names answers, only or lang"}},
    )
    def get_quiz(request: Request, q: Annotated[quiz.QuizQuery, Query()]) -> Any:
        checked(q.lang, request.app.state.i18n.langs)  # the core takes any well-formed code
        try:
            return evaluate(q, request.app.state.i18n)
        except quiz.QuizError as exc:
            return errors.refused(exc)

    @router.get("/quiz", response_class=HTMLResponse, include_in_schema=False)
    def quiz_page(request: Request) -> HTMLResponse:
        catalog = request.app.state.i18n
        query, view, errs = _page_state(dict(request.query_params), catalog)
        lang_q = f"lang={query.lang}" if query.lang != "en" else ""
        data = {
            "page": "quiz",
            "state": {"lang": query.lang},
            "errors": errs,
            "progress": view["progress"],
        }
        return respond(
            templates, request, data,
            view=view,
            query=lang_q,
            scenario_query="",
            unknown=errs,
            t=catalog.translator(query.lang, quiz=True),
            reset=quiz.href(quiz.QuizQuery(lang=query.lang, only=query.only), {}),
            show_all=quiz.href(quiz.QuizQuery(lang=query.lang), {}),
            only=query.only,
            answer_href=lambda qid, choice: _answer_href(query, qid, choice),
        )  # fmt: skip

    return router


def _answer_href(query: quiz.QuizQuery, qid: int, choice: int) -> str:
    """The URL after answering question ``qid`` with ``choice`` (a re-pick replaces it)."""
    return f"{quiz.href(query, {**quiz.picks(query), qid: choice})}#q{qid}"
