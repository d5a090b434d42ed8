"""Each scenario's view model kept as the JSON bytes ``/api/scenario`` sends, by its canonical
query, so a link a whole classroom opens at once is computed once and then served from memory.

A scenario's view model is a pure function of the validated Scenario, so the key is that
model dumped with every default, keys sorted: ``?tp=2&dp=2`` and ``?dp=2&tp=2&pp=2`` are one
entry. Entries are bytes, not dicts: their size is exact, so the bound in bytes is the memory
held (a parsed view model takes about 4x its JSON), and no caller can mutate a shared value.
The core stays pure: this cache lives in the web layer, one per app, on app.state.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from app.api import page_head, pool_jobs
from app.api.compression import DYNAMIC_LEVEL, MIN_BYTES
from app.api.json_chunks import json_pieces, loads_in_parts
from app.core.evaluate import Registry, evaluate
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.scenario import Scenario

V = TypeVar("V")
# Under this, one json.loads (a few ms) beats parsing member by member (2.5x slower).
PARSE_WHOLE_BYTES = page_head.HEAD_FROM_BYTES
Evaluator = Callable[[Scenario], dict[str, Any]]


class ByteLRU(Generic[V]):
    """Least-recently-used values whose sizes (key included) sum to at most max_bytes.

    Thread-safe, since sync routes run in a thread pool, and single-flight: while one thread
    computes a key, others asking for it wait for that result instead of computing it again.
    ``misses`` counts computations; ``hits`` counts answers that needed none (waits included).
    A value larger than the bound is returned but not kept, so max_bytes=0 keeps nothing.
    """

    def __init__(self, max_bytes: int, sizeof: Callable[[V], int]) -> None:
        self.max_bytes, self._sizeof = max_bytes, sizeof
        self._items: OrderedDict[str, tuple[V, int]] = OrderedDict()
        self._pending: dict[str, Future[V]] = {}
        self._lock = threading.Lock()
        self.bytes = self.hits = self.misses = self.evictions = 0

    @property
    def entries(self) -> int:
        return len(self._items)

    def peek(self, key: str) -> V | None:
        """The kept value (a hit), or None; never computes nor waits, so the event loop may
        call it. Values must not be None."""
        with self._lock:
            return self._hit(key)

    def get_or_compute(self, key: str, compute: Callable[[], V]) -> V:
        with self._lock:
            kept = self._hit(key)
            if kept is not None:
                return kept
            pending = self._pending.get(key)
            leader = pending is None
            if leader:
                pending = self._pending[key] = Future()
                self.misses += 1
            else:
                self.hits += 1
        if not leader:
            return pending.result()
        return self._lead(key, compute, pending)

    def _hit(self, key: str) -> V | None:
        # Caller holds the lock.
        found = self._items.get(key)
        if found is None:
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return found[0]

    def _lead(self, key: str, compute: Callable[[], V], pending: Future[V]) -> V:
        try:
            value = compute()
        except BaseException as exc:
            # Waiters get the same error (a ScenarioError is their 422 too); nothing is kept.
            with self._lock:
                del self._pending[key]
            pending.set_exception(exc)
            raise
        with self._lock:
            del self._pending[key]
            self._keep(key, value, self._sizeof(value) + len(key))
        pending.set_result(value)
        return value

    def _keep(self, key: str, value: V, size: int) -> None:
        if size > self.max_bytes:
            return
        self._items[key] = (value, size)
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, (_, dropped) = self._items.popitem(last=False)
            self.bytes -= dropped
            self.evictions += 1


@dataclass(frozen=True)
class Entry:
    """One scenario's answer: its JSON, that JSON gzipped once (None when too small to gain
    from it), and an ETag naming both, since they are the same representation encoded."""

    body: bytes
    gzipped: bytes | None
    etag: str
    head: bytes | None = None  # a big model's page head (app/api/page_head.py)

    def size(self) -> int:
        return len(self.body) + len(self.gzipped or b"") + len(self.head or b"")


def canonical(scenario: Scenario) -> str:
    """The key: every field, defaults included, keys sorted."""
    return json.dumps(scenario.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def render(model: dict[str, Any]) -> bytes:
    # Exactly what JSONResponse sends, so the cached bytes are the API's answer unchanged; in
    # pieces, so a big model does not hold the GIL (and the event loop) in one call; each
    # piece encoded on its own, since one encode of the whole 34 MB string held it ~50 ms.
    return b"".join(json_pieces(model))


def make_entry(model: dict[str, Any], version: str) -> Entry:
    body = render(model)
    head = render(page_head.head_of(model)) if len(body) >= page_head.HEAD_FROM_BYTES else None
    return entry_of(body, head, version)


def entry_of(body: bytes, head: bytes | None, version: str) -> Entry:
    # zlib and blake2b let go of the GIL while they work, so this is light on the event loop
    # even for a body a worker process made (``ScenarioCache.entry``'s ``remote``).
    # Compressed once here, not per response by the gzip middleware: 6 ms a hit otherwise.
    packed = gzip.compress(body, compresslevel=DYNAMIC_LEVEL, mtime=0)
    gzipped = packed if len(body) >= MIN_BYTES and len(packed) < len(body) else None
    # Weak: gzip and identity bytes are one representation. The version namespaces the hash.
    digest = hashlib.blake2b(body, digest_size=16).hexdigest()
    return Entry(body, gzipped, f'W/"{version}-{digest}"', head)


class ScenarioCache:
    """Scenario -> Entry through a ByteLRU; ``run`` is evaluate against the app's hardware
    registry unless a test counts calls. The registry is fixed for the app's lifetime, so the
    canonical scenario alone stays a sound key."""

    def __init__(
        self,
        max_bytes: int,
        version: str,
        run: Evaluator | None = None,
        hardware: Registry = HARDWARE,
        remote: Callable[[Scenario], bytes] | None = None,
    ) -> None:
        self.lru: ByteLRU[Entry] = ByteLRU(max_bytes, Entry.size)
        self._version = version
        self._run = run or partial(evaluate, hardware=hardware)
        # ``run``'s answer as render's bytes, made in a worker process (app/api/pool.py):
        # the app's own cache has one; a test's evaluator (counting calls) has none.
        self._remote = remote

    def kept(self, scenario: Scenario) -> Entry | None:
        """The scenario's answer if it is kept, else None; never computes nor waits."""
        return self.lru.peek(canonical(scenario))

    def entry(self, scenario: Scenario, offload: bool = False) -> Entry:
        """The scenario's answer; raises ScenarioError as evaluate does. ``offload``: a miss
        is computed by ``remote`` when the cache has one (a heavy request's, limits.py)."""
        build = self._offloaded if offload and self._remote else self._build
        return self.lru.get_or_compute(canonical(scenario), partial(build, scenario))

    def _build(self, scenario: Scenario) -> Entry:
        return make_entry(self._run(scenario), self._version)

    def _offloaded(self, scenario: Scenario) -> Entry:
        assert self._remote is not None
        return entry_of(*page_head.split(self._remote(scenario)), self._version)

    def model(
        self, scenario: Scenario, offload: bool = False, head: bool = False
    ) -> dict[str, Any]:
        """The view model for a page: a fresh dict parsed from the cached bytes (about half
        of evaluate's time), so the page embeds exactly the numbers the API returns. A big
        one is parsed in parts, so the parse does not hold the event loop (bench_heavy), or,
        with ``head``, only its page head is (page_head.py: for a page that reads no event
        or action of it), and it embeds the whole body."""
        entry = self.entry(scenario, offload)
        if len(entry.body) < PARSE_WHOLE_BYTES:
            return json.loads(entry.body)
        if head and entry.head is not None:
            return ViewModel(json.loads(entry.head), entry.body)
        return ViewModel(loads_in_parts(entry.body), entry.body)


class ViewModel(dict):
    """A big view model parsed from the cache's bytes, which it keeps: a page embeds those
    bytes (page_data.json_for_script) instead of encoding the dict again, which held the
    GIL, and /healthz with it, for up to 2 s (bench_heavy's pages). Read-only by contract:
    nothing that renders a page writes into its view model."""

    def __init__(self, parsed: dict[str, Any], raw: bytes) -> None:
        super().__init__(parsed)
        self.raw = raw


def remote_body(state: Any) -> Callable[[Scenario], bytes] | None:
    """The app's cache's ``remote``: its evaluator's answer (evaluate against the app's
    registry, with the board's error band: fidelity.banded) made in the app's worker pool;
    None for an app without one. The board is looked up per call, as banded does."""
    if state.pool is None:
        return None

    def body(scenario: Scenario) -> bytes:
        rows = state.fidelity.rows()
        registry = dict(state.hardware)  # a mappingproxy does not pickle
        return state.pool.call(pool_jobs.scenario_json, scenario, registry, rows)

    return body
