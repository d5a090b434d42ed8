"""Pause CPython's cyclic garbage collector around allocation-heavy pure work.

Building and simulating a large pipeline allocates about a million tuples and lists, none
of which form a reference cycle; the cyclic collector still rescans them as the heap grows,
which cost about 30% of p=64, m=512, v=4 (bench/bench_core.py). Reference counting frees
everything as usual while the collector is off.

Only a call that turned the collector off turns it back on: a nested or concurrent call that
finds it off leaves it alone, and so does a host that keeps it off on purpose.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def gc_paused(fn: Callable[P, R]) -> Callable[P, R]:
    @wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return run
