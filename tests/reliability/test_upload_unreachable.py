"""`meshscope upload` (and `import-trace --server`) to a server that is not there says so
within seconds, once, and keeps retrying until --timeout: it was silent for the whole
timeout (300 s by default) and only then printed "Connection refused" per rank."""

import json
import socket

import pytest
from support import records, run_info

from gpu_probe.upload import main

pytestmark = pytest.mark.timeout(60)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again on return: nothing listens there


def test_an_unreachable_server_is_named_once_while_retrying(tmp_path, capsys):
    info = run_info("gone", pp=2, steps=2)
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.json").write_text(info.model_dump_json())
    for rank in range(info.world_size):
        lines = [json.dumps(records(info, step, t0=1000.0 + step)[rank]) for step in range(2)]
        (out / f"rank-{rank:05d}.jsonl").write_text("".join(line + "\n" for line in lines))
    url = f"ws://127.0.0.1:{_closed_port()}/ws/ingest"
    code = main([str(out), "--server", url, "--token", "t" * 32, "--timeout", "6"])
    said = capsys.readouterr()
    err = said.err
    assert code == 1, err
    notice = f"meshscope upload: {url} does not answer ("
    assert err.count(notice) == 1, err
    assert "retrying until --timeout (6 s) runs out" in err
    assert "0 record(s) sent" in said.out + err
