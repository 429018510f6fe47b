"""One SQLite file under ``TKGQA_HOME`` shared by threads and processes: base of the LLM cache and the
embedding cache.

Several processes (the workers of ``tkgqa eval --executor ray`` on one machine, two ``tkgqa`` commands) may
write the same file: with ``wal`` the file is in WAL mode (readers never wait for the writer), every
connection waits up to ``timeout`` seconds for another process's lock (SQLite's busy handler), and
:meth:`SQLiteFile._write` takes the write lock up front (``BEGIN IMMEDIATE``, so a reader never has to upgrade
to a writer mid-transaction, which SQLite refuses at once) and retries a transaction that stayed busy
``retries`` times with a growing pause."""

from __future__ import annotations

import contextlib
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from .errors import ConfigError, DataError

T = TypeVar("T")


class SQLiteBusyError(DataError):
    """The file stayed locked by another process longer than the busy timeout (retried by ``_write``)."""


class SQLiteFile:
    """Opens a short connection per use (a transaction that commits on success), creating the folder and
    the schema on first use; a lock serialises the threads of one process, ``timeout`` waits for others.

    A file that is not a database (corrupt, truncated, something else), a full disk or a folder that cannot
    be created are project errors (:class:`DataError`, :class:`ConfigError`) saying what to do, never a
    ``sqlite3`` traceback."""

    schema: str = ""
    timeout: float = 30.0
    wal: bool = False
    #: How many times :meth:`_write` runs a transaction again after the busy timeout ran out.
    retries: int = 4

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._ready = False

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if not self._ready:
                self._make_folder()
            try:
                conn = sqlite3.connect(self.path, timeout=self.timeout)
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            try:
                if not self._ready:
                    self._initialise(conn)
                if self.wal:
                    conn.execute("PRAGMA synchronous=NORMAL")  # per connection; durable enough in WAL
                with conn:
                    yield conn
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            finally:
                conn.close()

    def _initialise(self, conn: sqlite3.Connection) -> None:
        """WAL mode and the schema, once per process. Several processes opening a new file at once race
        here: switching to WAL needs an exclusive lock, and SQLite answers a reader that would wait for it
        with "locked" at once (deadlock avoidance, no busy handler), so the idempotent setup is retried."""
        attempts = 10 * (self.retries + 1)
        for attempt in range(attempts):
            try:
                if self.wal:
                    conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(self.schema)  # CREATE … IF NOT EXISTS: safe to run again
                self._ready = True
                return
            except sqlite3.OperationalError as exc:
                text = str(exc)
                if ("locked" not in text and "busy" not in text) or attempt == attempts - 1:
                    raise
                if conn.in_transaction:
                    conn.rollback()
                time.sleep(min(0.5, 0.01 * 2**attempt) * (0.5 + random.random()))

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(conn)`` in one write transaction taken up front (``BEGIN IMMEDIATE``); when another process
        keeps the file locked past ``timeout``, the whole transaction runs again (``retries`` times, with a
        growing, jittered pause) before the :class:`SQLiteBusyError` is raised."""
        for attempt in range(self.retries + 1):
            try:
                with self._connect() as conn:
                    if conn.in_transaction:
                        conn.commit()
                    conn.execute("BEGIN IMMEDIATE")
                    return fn(conn)
            except SQLiteBusyError:
                if attempt == self.retries:
                    raise
                time.sleep(min(2.0, 0.05 * 2**attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable")  # pragma: no cover

    def _make_folder(self) -> None:
        folder = self.path.parent
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"{str(folder)!r} is a file, not a folder; point TKGQA_HOME at a folder")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create {str(folder)!r} ({exc.strerror or exc}); set TKGQA_HOME to a writable folder"
            ) from None

    def _error(self, exc: sqlite3.Error) -> DataError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return SQLiteBusyError(
                f"is busy ({text}): another process held it longer than {self.timeout:.0f} s; try again",
                path=str(self.path),
            )
        if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
            what = (
                f"is not a readable SQLite database ({text}); if it is tkgqa's LLM cache, deleting it is "
                "safe (it is rebuilt)"
            )
        elif "full" in text:
            what = f"cannot be written ({text}); free some space and try again"
        else:
            what = f"cannot be used ({type(exc).__name__}: {text}); check the file and its folder"
        return DataError(what, path=str(self.path))
