"""One writing server per database, and a read-only database served read-only (issue 26).

Two servers on one database each keep their own liveness: a run whose ranks reach both
ends "stale" on both. So a server takes an exclusive advisory lock (``fcntl.flock``) on a
sidecar file, ``<db>.lock``, for its lifetime, and writes there who holds it; a second one
fails at start with one line naming the database and the holder. The kernel drops the lock
when its holder exits, even by SIGKILL, so a stale file never blocks a restart (which is
why the file itself is never deleted: deleting it would let two servers lock two inodes).

A database SQLite can only read (the file or its filesystem write-protected) is found at
start by a write that is rolled back, before anything else touches it: it is served
read-only and takes no lock, since it writes nothing that a writer could split.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path


class DatabaseInUse(Exception):
    """Another live process holds this database's lock; the message is one line."""


@dataclass
class Claim:
    db: Path
    readonly: bool
    fd: int | None = None  # the locked sidecar; None: read-only, nothing to lock

    def release(self) -> None:
        """Unlock (idempotent): the next server may start on this database."""
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor drops the flock


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


def read_only(db: Path) -> bool:
    """True when SQLite refuses to write ``db``. A file not there yet is not read-only:
    the store creates it, or fails loudly trying."""
    if not db.exists():
        return False
    conn = sqlite3.connect(f"file:{db}?mode=rw", uri=True, isolation_level=None, timeout=5)
    try:
        # BEGIN alone writes nothing and succeeds on a read-only file; a schema change is
        # a real write, refused with SQLITE_READONLY, and rolled back either way.
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("CREATE TABLE meshscope_write_probe (x)")
        return False
    except sqlite3.OperationalError as err:
        code = getattr(err, "sqlite_errorcode", None)
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return False  # another connection is writing it: writable (the lock decides)
        if code == sqlite3.SQLITE_READONLY:
            return True
        raise
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


def claim(db: Path, who: str = "meshscope server") -> Claim:
    """Lock ``db`` for this process, or find it read-only; raises ``DatabaseInUse``."""
    db = Path(db).resolve()
    if read_only(db):
        return Claim(db, readonly=True)
    db.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path(db), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 400, 0).decode("utf-8", "replace").strip() or "unknown"
        os.close(fd)
        raise DatabaseInUse(
            f"database {db} is in use by another meshscope server ({holder}); "
            "stop it, or give this one another --db"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
    note = f"pid {os.getpid()} on {socket.gethostname()}, {who}, since {since}"
    with contextlib.suppress(OSError):  # the note only names the holder; the lock is what counts
        os.ftruncate(fd, 0)
        os.pwrite(fd, note.encode() + b"\n", 0)
    return Claim(db, readonly=False, fd=fd)
