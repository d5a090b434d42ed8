"""The cycle collector's policy while the server serves (issue 26 item 11).

CPython collects its youngest generation every 700 new container objects (gc.get_threshold,
CPython 3.11 Modules/gcmodule.c), and a full collection walks every object the process holds.
Ingest makes ~20 short-lived containers a record (the frame's message, the record and its
event list, a future, an ack), and at 1,024 ranks a saturated server held ~36,000 records in
flight as well as ~90,000 objects of its own (routes, models, the catalogues): collections
were ~20% of the server's CPU at one record per frame, each full one ~0.15 s.

``serve`` freezes what startup made (gc.freeze: moved to a permanent generation no
collection walks; "gc.freeze()" in the gc module's docs, for long-lived processes) and
collects the young generation every ``YOUNG`` containers instead of 700 (the middle one
every 20 young collections, not 10: fewer full collections). Garbage in a cycle still
goes, a little later: at most ``YOUNG`` containers wait for the next young collection.
``restore`` puts both back when the server stops (tests start many apps in one process).
"""

from __future__ import annotations

import gc
from collections.abc import Callable

YOUNG = 20_000  # new containers between young collections (CPython's default: 700)
OLDER = (20, 10)  # young collections per middle one, middle ones per full one (10, 10)


def serve() -> Callable[[], None]:
    """Apply the policy; returns what undoes it."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG, *OLDER)

    def restore() -> None:
        # Only over the policy: two apps in one process (tests) may stop in either order,
        # and the last one's ``before`` is the policy itself.
        if gc.get_threshold() == (YOUNG, *OLDER):
            gc.set_threshold(*before)
        gc.unfreeze()

    return restore
