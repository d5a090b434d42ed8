"""Records frames from the sender's side (gpu_probe.reporter.Sender): how many records a frame
may carry on this connection, and spool lines packed into frames.

A server that takes ``records`` frames says so in its websocket handshake's answer
(``protocol.BATCH_HEADER``, its cap); an older one sends no such header and gets one
record per frame, since a frame type it does not know would be a strike there.
"""

from __future__ import annotations

from app.core.inputs.protocol import BATCH_HEADER, MAX_BATCH_RECORDS, MAX_FRAME_BYTES

BATCH_BYTES = MAX_FRAME_BYTES // 2  # a records frame's bytes at most: well inside the cap


def offered_batch(headers) -> int:
    """The most records a records frame may hold on this connection: the server's
    ``BATCH_HEADER`` within ours, or 1 (one record per frame) when it offers none."""
    try:
        return max(1, min(int(headers.get(BATCH_HEADER) or 1), MAX_BATCH_RECORDS))
    except (TypeError, ValueError):
        return 1


def frames(lines: list[str], most: int, budget: int = BATCH_BYTES) -> list[str]:
    """Spool lines (records' JSON) as frames: runs of up to ``most`` lines and ``budget``
    bytes in a records frame, a line alone in a record frame."""
    out, run, size = [], [], 0
    for line in lines:
        n = len(line.encode()) + 1
        if run and (len(run) >= most or size + n > budget):
            out.append(_frame(run))
            run, size = [], 0
        run.append(line)
        size += n
    if run:
        out.append(_frame(run))
    return out


def _frame(lines: list[str]) -> str:
    if len(lines) == 1:
        return '{"type":"record","record":' + lines[0] + "}"
    return '{"type":"records","records":[' + ",".join(lines) + "]}"
