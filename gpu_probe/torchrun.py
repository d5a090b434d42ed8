"""``python -m gpu_probe.torchrun ARGS``: torchrun with the exit code of a signal.

torchrun's agent turns SIGTERM, SIGINT, SIGHUP and SIGQUIT into a ``SignalException``
(torch/distributed/elastic/multiprocessing/api.py, ``_terminate_process_handler``) that
escapes ``torch.distributed.run.main`` as a traceback and exit code 1, so a scheduler
cannot tell a stopped job from a failed one. This runs the same ``main`` (every flag as
torchrun's) and exits 128 + the signal instead, as a shell reports a process a signal ended.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.run import main as torchrun_main

    try:
        torchrun_main(argv)
    except SignalException as stop:
        # The agent already stopped its workers (each flushes on the SIGTERM it forwards).
        print(f"[probe] torchrun stopped by {stop.sigval.name}", file=sys.stderr, flush=True)
        return 128 + int(stop.sigval)
    return 0


if __name__ == "__main__":
    sys.argv[0] = "torchrun"  # torchrun's own messages name it
    sys.exit(main(sys.argv[1:]))
