"""`meshscope serve | probe`: the command line."""

from __future__ import annotations

import argparse
import importlib.util
import secrets
import subprocess
import sys
from pathlib import Path


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.api.hardware import HardwareProfileFileError
    from app.main import create_app
    from app.settings import Settings

    overrides = {"host": args.host, "port": args.port}
    if args.db is not None:
        overrides["db"] = Path(args.db)
    if args.hardware_profile:
        overrides["hardware_profiles"] = [Path(p) for p in args.hardware_profile]
    settings = Settings(**overrides)
    if settings.ingest_token is None:
        # No token configured: make one for this server's lifetime and say how to use it.
        token = secrets.token_urlsafe(32)
        settings = settings.model_copy(update={"ingest_token": token})
        print(f"meshscope: ingest token for this server: {token}", flush=True)
        print(f"  export MESHSCOPE_INGEST_TOKEN={token}   # then: meshscope probe --server "
              f"ws://{settings.host}:{settings.port}/ws/ingest ...", flush=True)  # fmt: skip
    try:
        app = create_app(settings)
    except HardwareProfileFileError as exc:
        print(f"meshscope: {exc}", file=sys.stderr)  # one line, then no server at all
        return 2
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
    return 0


def _probe(rest: list[str]) -> int:
    # A separate interpreter: the server package never imports torch or gpu_probe, and the
    # probe's launcher forks its ranks from a process that has imported torch itself.
    # numpy too: torch does not depend on it, but its *_object collectives pickle through it.
    missing = [m for m in ("torch", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"meshscope probe needs {' and '.join(missing)}. Install torch first (CPU-only: "
            "pip install torch --index-url https://download.pytorch.org/whl/cpu), "
            "then: pip install 'meshscope[probe]' (from a checkout: pip install '.[probe]')",
            file=sys.stderr,
        )
        return 2
    return subprocess.call([sys.executable, "-m", "gpu_probe", *rest])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meshscope", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the web app")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--db", default=None, help="SQLite file for measured runs")
    serve.add_argument(
        "--hardware-profile",
        action="append",
        metavar="PATH",
        help="hardware profile JSON to offer beside the presets (repeatable)",
    )
    sub.add_parser("probe", help="run gpu_probe locally (flags: meshscope probe --help)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["probe"]:
        return _probe(argv[1:])
    args = build_parser().parse_args(argv)
    return _serve(args)


if __name__ == "__main__":
    raise SystemExit(main())
