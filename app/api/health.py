"""GET /healthz: the server is up and answering."""

from fastapi import APIRouter

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness check")
async def healthz() -> dict[str, str]:
    # async: answered on the event loop itself, so a full thread pool of heavy work cannot
    # queue it (bench/bench_heavy.py).
    return {"status": "ok"}
