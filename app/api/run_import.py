"""``POST /api/runs/import?run=&name=``: a trace or log file uploaded from /runs becomes a run,
as ``meshscope import-trace`` would store it (issue 25, item 4).

The body is the file itself (``application/octet-stream``; python-multipart is not a
dependency): one trace, torchtitan JSONL or Megatron log, or a ``.tar`` of several (the page
packs a multi-file choice into one). Uploads write data, so the ingest token is required,
as on ``/ws/ingest``, checked before a byte of the body is read. The body streams to a
private temporary directory, never into memory, and may be up to ``max_import_bytes``
(413 past it; body_limit lets this path past the small cap of every other body). Reading,
labelling and aligning are the CLI's own code (app/importers/upload.py) on the thread pool,
under a heavy slot (app/api/limits.py); the records are stored by the CLI's own transaction
(app/importers/trace_store.store_run) on the live store's writer thread, so an upload is all
or nothing, and uploading the same files again stores nothing new.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from app.api import costs, query_guard
from app.api.ingest import bearer_ok
from app.api.limits import BUSY, Admission, heavy
from app.core.inputs.protocol import RUN_NAME_PATTERN
from app.core.layout import mesh
from app.core.layout.topology import ORDER_PRESETS, parse_order
from app.core.schedules import ScheduleName
from app.core.support.echo import echo
from app.core.traces import TraceError
from app.core.traces.refusals import refuse
from app.errors import issue, responses, unprocessable
from app.importers import scenario_link
from app.importers.trace_store import store_run
from app.importers.upload import name_ok, prepare_upload
from app.live.services import Live

PATH = "/api/runs/import"
COST_BYTES = 64 << 20  # a heavy slot per 64 MiB uploaded: ~2 s of parsing, as a big scenario
router = APIRouter(tags=["runs"])
Admit = Annotated[Admission, Depends(heavy)]
Axis = Annotated[int | None, Query(ge=1, le=65536)]
OCTETS, BINARY = "application/octet-stream", {"type": "string", "format": "binary"}
WHY = {
    401: "No ingest token shown (Authorization: Bearer TOKEN)",
    403: "The ingest token is wrong, or this server has none",
    422: "A parameter is invalid, or the file is refused: `msg` names the file and why",
    503: "The database is read-only: this server stores nothing",
}


def require_ingest(request: Request) -> None:
    """The ingest token, as /ws/ingest checks it (constant time), before the body is read."""
    header = request.headers.get("authorization")
    if not header:
        raise HTTPException(401, "an upload needs the ingest token: Authorization: Bearer TOKEN",
                            headers={"WWW-Authenticate": "Bearer"})  # fmt: skip
    if not bearer_ok(header, request.app.state.live.token):
        raise HTTPException(403, "the ingest token is wrong (or this server has none)")


@router.post(
    PATH,
    summary="Import an uploaded trace, log or .tar of them as a run (the ingest token needed)",
    dependencies=[Depends(require_ingest), Depends(query_guard.declared_only)],
    responses={**responses(401, 403, 413, 422, 503, why=WHY), **BUSY},
    openapi_extra={"requestBody": {"required": True, "content": {OCTETS: {"schema": BINARY}}}},
)
async def import_upload(
    request: Request,
    limiter: Admit,
    run: Annotated[str, Query(pattern=RUN_NAME_PATTERN, max_length=64)],
    name: Annotated[str, Query(max_length=200, description="the file's name")],
    dp: Axis = None,
    tp: Axis = None,
    pp: Axis = None,
    cp: Axis = None,
    ep: Axis = None,
    order: Annotated[str | None, Query(max_length=64)] = None,
    gpus_per_node: Annotated[int | None, Query(ge=1, le=1024, description="default 8")] = None,
    # The schedule's name checked before the body is read, at query.schedule: it was refused
    # only after the whole upload, and against the file.
    schedule: Annotated[ScheduleName | None, Query()] = None,
    microbatches: Annotated[int | None, Query(ge=1, le=65536)] = None,
    scenario: Annotated[
        str | None,
        Query(
            max_length=scenario_link.MAX_LINK,
            description="a meshscope scenario link: "
            "its layout, schedule and microbatches, instead of those fields",
        ),
    ] = None,
) -> Any:
    live: Live = request.app.state.live
    if live.readonly:
        raise HTTPException(503, f"the database {live.store.path} is read-only: nothing stored")
    if not name_ok(name):
        return unprocessable([issue(["query", "name"], "a plain file name is needed (letters, "
                                    "digits, . _ + -; no directory)")])  # fmt: skip
    cap = request.app.state.settings.max_import_bytes
    layout = dict(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, order=order, gpus_per_node=gpus_per_node,
                  schedule=schedule.value if schedule else None, microbatches=microbatches,
                  scenario=scenario)  # fmt: skip
    try:  # before the body is read: a link the page would refuse costs no upload
        scenario_link.resolved(argparse.Namespace(**layout))
    except TraceError as err:
        return unprocessable([issue(["query", "scenario"], str(err))])
    if order is not None and (bad := _bad_order(order)) is not None:
        return unprocessable([bad])
    if dp is not None and ep is not None and (bad := _bad_fold(layout)) is not None:
        return unprocessable([bad])
    staged = Path(await run_in_threadpool(tempfile.mkdtemp, None, "meshscope-upload-"))
    try:
        size = await _receive(request, staged / name, cap)
        work = partial(prepare_upload, staged, run, 4 * cap, **layout)
        info, records, summary = await limiter.run(work, cost=1.0 + size / COST_BYTES)
        stored = await live.writer.call(store_run, live.store, info, records, summary)
        # Its action segments now, in a slot as any whole-run query's catch-up, so the run
        # page's whole-run card answers at once (derived data: warm() only logs a failure).
        await limiter.run(live.actions.warm, info.run, cost=costs.ACTIONS)
    except TraceError as err:
        return unprocessable([refusal(name, err)])
    except ClientDisconnect:  # the page was closed mid-upload: nothing stored, nobody to tell
        return JSONResponse({"detail": "the upload was cut off"}, 400)
    finally:
        await run_in_threadpool(shutil.rmtree, staged, True)
    body = {"run": info.run, "url": f"/runs/{info.run}", "bytes": size, "ranks": info.world_size,
            "records": len(records), "stored": stored, "summary": str(summary),
            "said": summary.said()}  # fmt: skip
    return JSONResponse(body)


def _bad_order(order: str) -> dict | None:
    """The 422 detail of a rank order no layout takes, keyed as the overview's (the
    catalogue's err.scenario.order, so /runs words it in its language), or None; asked
    before the body is read, as the importer's English "layout: ..." came after it."""
    try:
        parse_order(order)
    except ValueError as err:
        ctx = {"order": echo(order), "presets": ", ".join(ORDER_PRESETS)}
        return issue(["query", "order"], str(err), "scenario.order", ctx)
    return None


def _bad_fold(layout: dict) -> dict | None:
    """The 422 detail of an ep that does not fold over the given dp x cp (x tp), keyed as the
    overview's (app/core/inputs/parallel_axes.py), or None; with dp left out the world of the
    files decides, and the import refuses it then."""
    sizes = {a: layout[a] or 1 for a in ("dp", "tp", "pp", "cp", "ep")}
    order = parse_order(layout["order"] or "tp-pp-dp")
    problem = mesh.fold_problem(order, {**sizes, "etp": sizes["tp"]})
    if problem == "divides":
        n = sizes["dp"] * sizes["cp"]
        return issue(["query", "ep"], f"ep = {sizes['ep']} must divide dp*cp = {n}",
                     "scenario.ep_divides", {"ep": sizes["ep"], "dp": sizes["dp"],
                                             "cp": sizes["cp"], "n": n})  # fmt: skip
    if problem == "pipeline":
        return issue(
            ["query", "ep"],
            "the expert groups would break the pipeline groups",
            "scenario.ep_pipeline",
            {"order": echo("-".join(order)), "cp": sizes["cp"]},
        )
    return None


def refusal(name: str, err: TraceError) -> dict:
    """The 422 detail of a refused file: its ``type`` trace.<key> and ``ctx`` the params when
    the reason is keyed (app/core/traces/refusals.py), so /runs words it in its language
    (static/js/i18n.js errorText); else file_refused, said in English."""
    if err.key:
        return issue(["body", name], str(err), f"trace.{err.key}", err.params)
    return issue(["body", name], str(err), "file_refused")


async def _receive(request: Request, path: Path, cap: int) -> int:
    """The body, written to ``path`` as it arrives; its size. Each write is one chunk of
    the socket's (tens of KB) to the page cache: no wait long enough to leave the loop."""
    size = 0
    with path.open("wb") as out:
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:  # body_limit refuses first; this holds if the path is not set there
                raise HTTPException(413, f"the upload is larger than {cap} bytes "
                                    "(MESHSCOPE_MAX_IMPORT_BYTES)")  # fmt: skip
            out.write(chunk)
    if size == 0:
        raise refuse("empty_upload", file=path.name)
    return size
