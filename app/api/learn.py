"""GET /api/learn and GET /learn: the guided path, one step of the article at a time.

The URL is the progress (``step=dp&lang=zh``). The page is rendered whole on the server (the
analogy, the question, the links), with the step's widget data embedded, computed through the
app's scenario cache from the same evaluate() the views use; ``static/js/learn.js`` draws the
widget and moves between steps with the arrow keys. A bad ``step``/``lang`` is a 422 naming
the field, on the API and on the page (which then shows the first step under the banner).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from app import i18n
from app.api.page_data import errors_by_field, respond
from app.api.pages import EvaluatorDep
from app.api.quiz import question_json
from app.core.evaluate.learn import Evaluator, widget
from app.core.teach import learn, quiz
from app.i18n.lang import Lang, checked
from app.paths import asset_dir


def step_json(
    key: str, lang: str, run: Evaluator, catalog: i18n.Catalog | None = None
) -> dict[str, Any]:
    """One step in one language: its place in the path, widget data, question and views."""
    step = learn.BY_KEY[key]
    t = (catalog or i18n.default()).translator(lang)
    before, after = learn.neighbours(key)
    return {
        "step": key,
        "index": learn.STEPS.index(step),
        "count": len(learn.STEPS),
        "steps": [{"key": s.key, "href": learn.href(s.key, lang)} for s in learn.STEPS],
        "prev": before and learn.href(before.key, lang),
        "next": after and learn.href(after.key, lang),
        "widget": widget(step, run),
        "question": _question(step.quiz, lang, catalog),
        "quiz_href": quiz.href(quiz.QuizQuery(lang=lang, only=str(step.quiz)), {}),
        "views": [{"label": t(v.label), "href": v.href(lang)} for v in step.views],
    }


def _question(qid: int, lang: str, catalog: i18n.Catalog | None) -> dict[str, Any]:
    """The step's quiz question; each choice links to the self-test answered with it, so
    without a script a pick still shows its reasoning."""
    out = question_json(quiz.BY_ID[qid], lang, None, catalog)
    only = quiz.QuizQuery(lang=lang, only=str(qid))
    for i, choice in enumerate(out["choices"]):
        choice["href"] = f"{quiz.href(only, {qid: i})}#q{qid}"
    return out


class LearnPage(learn.LearnQuery):
    """The page's query: the core's, with ``lang`` one of the app catalogue's languages."""

    lang: Lang = "en"


def _page_state(
    params: dict[str, str], catalog: i18n.Catalog
) -> tuple[learn.LearnQuery, dict[str, str]]:
    """The page's query and errors; on an error, the first step in a known language."""
    try:
        return LearnPage.model_validate(params, context=catalog.context), {}
    except ValidationError as exc:
        errs = errors_by_field(exc, str(params.get("lang", "en")), catalog)
        lang = params.get("lang") if params.get("lang") in catalog.langs else "en"
        return learn.LearnQuery(lang=lang), errs


def make_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    router = APIRouter()

    @router.get(
        "/api/learn",
        tags=["learn"],
        summary="One step of the guided path: its widget data, quiz question and full views",
        responses={422: {"description": "`detail[].loc` names step or lang"}},
    )
    def get_learn(
        request: Request, q: Annotated[learn.LearnQuery, Query()], run: EvaluatorDep
    ) -> Any:
        checked(q.lang, request.app.state.i18n.langs)  # the core takes any well-formed code
        return step_json(q.step, q.lang, run, request.app.state.i18n)

    @router.get("/learn", response_class=HTMLResponse, include_in_schema=False)
    def learn_page(request: Request, run: EvaluatorDep) -> HTMLResponse:
        catalog = request.app.state.i18n
        query, errs = _page_state(dict(request.query_params), catalog)
        view = step_json(query.step, query.lang, run, catalog)
        data = {"page": "learn", "state": {"lang": query.lang, "step": query.step},
                "errors": errs, "learn": view}  # fmt: skip
        return respond(
            templates, request, data,
            view=view,
            query=f"lang={query.lang}" if query.lang != "en" else "",
            scenario_query="",
            unknown=errs,
            t=catalog.translator(query.lang, quiz=True),
        )  # fmt: skip

    return router
