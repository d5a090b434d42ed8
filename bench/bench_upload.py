"""Upload on /runs (POST /api/runs/import) beside `meshscope import-trace --db` of the same
files, side by side in one run (not a test): MB/s of input and the time per import.

The inputs are the fixtures (tests/fixtures/traces): the gloo dp=2 x pp=2 trace set as one
.tar (what the page sends for several files), and a Megatron dp=2 x tp=2 x pp=2 log written
by the fixture's own script with ``--iters`` iterations instead of 3. The
server is uvicorn on loopback in a thread of this process, each upload a fresh run name (so
each stores its records); the CLI path is import_trace.prepare_any and trace_store.to_db,
which is what the command runs. The trace set is small: its figures are per-import
overheads more than parsing speed (bench_import_trace.py measures that on a large trace).

    python bench/bench_upload.py [--repeat 5] [--iters 400]
"""

from __future__ import annotations

import argparse
import io
import socket
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TRACES = ROOT / "tests" / "fixtures" / "traces"
TOKEN = "bench-upload-token-0123456789"


def tar_bytes(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for p in sorted(folder.iterdir()):
            tar.add(p, arcname=p.name)
    return buf.getvalue()


def serve(db: Path):
    import uvicorn

    from app.main import create_app
    from app.settings import Settings

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{port}"


def upload(base: str, body: bytes, name: str, run: str) -> None:
    req = urllib.request.Request(
        f"{base}/api/runs/import?run={run}&name={name}", data=body, method="POST",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/octet-stream"},
    )  # fmt: skip
    with urllib.request.urlopen(req) as res:
        assert res.status == 200


def cli(path: Path, db: Path, run: str) -> None:
    from app.importers.import_trace import db_path, parse, prepare_any
    from app.importers.trace_store import to_db

    args = parse([str(path), "--run", run, "--db", str(db)])
    info, records, summary = prepare_any(args)
    to_db(db_path(args), info, records, summary)


def megatron_log(path: Path, iters: int) -> Path:
    sys.path.insert(0, str(TRACES))
    import make_megatron_log as make

    make.ITERS = make.ARGS["train_iters"] = iters
    make.main(str(path))
    return path


def timed(fn, repeat: int) -> float:
    t = time.perf_counter()
    for i in range(repeat):
        fn(i)
    return (time.perf_counter() - t) / repeat


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--iters", type=int, default=400)
    opts = ap.parse_args()
    n = opts.repeat
    tmp = Path(tempfile.mkdtemp(prefix="bench-upload-"))
    tar = tmp / "gloo.tar"
    tar.write_bytes(tar_bytes(TRACES / "gloo_dp2_pp2"))
    log = megatron_log(tmp / "megatron.log", opts.iters)
    server, base = serve(tmp / "server.sqlite3")
    print(f"{'input':<28}{'MB':>8}{'upload s':>10}{'CLI s':>9}{'upload MB/s':>13}"
          f"{'CLI MB/s':>10}{'ratio':>7}")  # fmt: skip
    try:
        inputs = (("gloo dp2 pp2, 4 traces .tar", tar), (f"Megatron, {opts.iters} iters", log))
        db = tmp / "cli.sqlite3"
        for label, path in inputs:
            body = path.read_bytes()
            mb = len(body) / 2**20
            up = timed(lambda i, b=body, p=path: upload(base, b, p.name, f"u{id(p)}-{i}"), n)
            # The CLI reads the folder's files for the traces, as a user would point it.
            src = TRACES / "gloo_dp2_pp2" if path == tar else path
            by_cli = timed(lambda i, s=src: cli(s, db, f"c{id(s)}-{i}"), n)
            print(f"{label:<28}{mb:>8.3f}{up:>10.3f}{by_cli:>9.3f}{mb / up:>13.2f}"
                  f"{mb / by_cli:>10.2f}{up / by_cli:>7.2f}")  # fmt: skip
    finally:
        server.should_exit = True


if __name__ == "__main__":
    main()
