"""`meshscope serve | probe | calibrate | upload | import-trace`: the command line."""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported lazily at run time: `meshscope probe` needs no server code
    from app.live.db_claim import Claim
    from app.settings import Settings


def settings_errors(exc) -> list[str]:
    """A settings ValidationError as lines naming the flag or variable and the reason."""
    out = []
    for e in exc.errors():
        name = ".".join(str(x) for x in e.get("loc", ())) or "settings"
        flag = f"--{name.replace('_', '-')} or " if name in ("host", "port", "db") else ""
        out.append(f"{flag}MESHSCOPE_{name.upper()}: {e.get('msg', 'invalid value')}")
    return out


def serve_settings(args: argparse.Namespace) -> Settings:
    """The flags given over the environment's MESHSCOPE_* over the defaults: a flag left out
    no longer hides MESHSCOPE_HOST or MESHSCOPE_PORT (its default used to be passed as given)."""
    from app.settings import Settings

    overrides: dict[str, object] = {}
    if args.host is not None:
        overrides["host"] = args.host
    if args.port is not None:
        overrides["port"] = args.port
    if args.db is not None:
        overrides["db"] = Path(args.db)
    if args.hardware_profile:
        overrides["hardware_profiles"] = [Path(p) for p in args.hardware_profile]
    return Settings(**overrides)


def _serve(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from app.live.db_claim import DatabaseInUse, claim

    try:
        settings = serve_settings(args)
    except ValidationError as exc:  # a flag or MESHSCOPE_* value: one line each, no traceback
        for line in settings_errors(exc):
            print(f"meshscope: {line}", file=sys.stderr)
        return 2
    # Before anything is printed or served: a second server on this database would split
    # its runs' liveness, so it stops here with one line (app/live/db_claim.py).
    try:
        held = claim(settings.db, f"meshscope serve on {settings.host}:{settings.port}")
    except DatabaseInUse as exc:
        print(f"meshscope: {exc}", file=sys.stderr)
        return 2
    try:
        return _serve_claimed(settings, held)
    finally:
        held.release()


def _serve_claimed(settings: Settings, held: Claim) -> int:
    """The server, on a database this process holds (or reads only)."""
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    from app import fd_limit, log_limit
    from app.api import connections
    from app.api.hardware import HardwareProfileFileError
    from app.main import create_app

    busy = _port_taken(settings.host, settings.port)
    if busy is not None:  # before the token is printed: a server that cannot start has none
        print(f"meshscope: cannot listen on {settings.host}:{settings.port}: {busy}",
              file=sys.stderr)  # fmt: skip
        return 2
    if held.readonly:
        print(f"meshscope: the database {held.db} is read-only: serving its runs read-only; "
              "ingest is refused (probes get a fatal error)", flush=True)  # fmt: skip
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
    app.state.db_claim = held  # the lifespan's store uses it instead of claiming again
    # Within the open-file limit (app/fd_limit.py): raise it, cap connections below it, and
    # keep a flood of identical errors from filling the disk (app/log_limit.py).
    budget = fd_limit.fd_budget()
    print(f"meshscope: open-file limit {budget.soft} (was {budget.before}, hard "
          f"{budget.hard}); at most {budget.cap} connections at once", flush=True)  # fmt: skip
    # Slow clients cannot hoard connections (app/api/connections.py): a header-read timeout,
    # a per-address limit and a reserve for clients that send their request at once; idle
    # kept-alive connections close after keep_alive_s (uvicorn's own timeout).
    bounds = connections.ConnectionBounds(
        settings.header_timeout_s, settings.client_connections, connections.reserve_for(budget.cap)
    )
    http = connections.guarded_protocol(fd_limit.capped_protocol(AutoHTTPProtocol), bounds)
    uvicorn.run(
        app, host=settings.host, port=settings.port, log_level="info",
        log_config=log_limit.uvicorn_log_config(budget.explanations(10.0), 10.0),
        limit_concurrency=budget.cap, http=http, timeout_keep_alive=settings.keep_alive_s,
    )  # fmt: skip
    return 0


def _port_taken(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (in use, not this machine's address), or None.
    Bound as uvicorn binds (SO_REUSEADDR), then let go: uvicorn binds it again a moment later."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        return str(exc)
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def _probe(rest: list[str], module: str = "gpu_probe") -> int:
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
    return _run_forwarding_signals([sys.executable, "-m", module, *rest])


def _upload(rest: list[str]) -> int:
    # gpu_probe.upload speaks the reporter's protocol and imports no torch; a separate
    # interpreter keeps the rule that nothing in ``app`` imports ``gpu_probe``.
    return _run_forwarding_signals([sys.executable, "-m", "gpu_probe.upload", *rest])


def _run_forwarding_signals(cmd: list[str]) -> int:
    """Run ``cmd``; SIGTERM/SIGINT to us go to it (it stops its own ranks and flushes), and
    we return its exit code, non-zero after a signal, once it is gone."""
    # kill -9 of this process runs no handler: the child asks the kernel to end it with us
    # (gpu_probe.lifeline reads our pid here; other commands ignore it).
    child = subprocess.Popen(cmd, env={**os.environ, "GPU_PROBE_PARENT_PID": str(os.getpid())})

    def forward(signum, frame) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        return child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meshscope", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser(
        "serve",
        help="serve the web app",
        description="Serve the web app and the probe's ingest. Every setting can also come "
        "from the environment as MESHSCOPE_<NAME> (README); a flag given wins.",
    )
    serve.add_argument("--host", default=None, help="default 127.0.0.1 (MESHSCOPE_HOST)")
    serve.add_argument("--port", type=int, default=None, help="default 8000 (MESHSCOPE_PORT)")
    serve.add_argument(
        "--db", default=None, help="SQLite file for measured runs (default meshscope.sqlite3)"
    )
    serve.add_argument(
        "--hardware-profile",
        action="append",
        metavar="PATH",
        help="hardware profile JSON to offer beside the presets (repeatable)",
    )
    sub.add_parser("probe", help="run gpu_probe locally (flags: meshscope probe --help)")
    sub.add_parser("calibrate", help="measure this machine into a hardware profile (--help)")
    sub.add_parser(
        "upload",
        help="send a probe spool's unsent records: meshscope upload SPOOL_DIR --server URL",
    )
    sub.add_parser(
        "import-trace",
        help="import PyTorch profiler traces (one per rank), torchtitan structured logs, a "
        "Megatron or a DeepSpeed log as a run: meshscope import-trace PATH... --run NAME "
        "(also: meshscope import; flags: meshscope import-trace --help)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["probe"]:
        return _probe(argv[1:])
    if argv[:1] == ["calibrate"]:
        return _probe(argv[1:], "gpu_probe.calibrate")
    if argv[:1] == ["upload"]:
        return _upload(argv[1:])
    if argv[:1] in (["import-trace"], ["import"]):  # issue 25 item 4 names it `import`
        from app.importers.import_trace import main as import_trace  # issue 25

        return import_trace(argv[1:])
    args = build_parser().parse_args(argv)
    return _serve(args)


if __name__ == "__main__":
    raise SystemExit(main())
