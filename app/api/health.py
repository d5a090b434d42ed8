"""GET /healthz: the server is up and answering."""

from fastapi import APIRouter

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness check")
def healthz() -> dict[str, str]:
    return {"status": "ok"}
