"""One SQLite file under ``TKGQA_HOME`` shared by threads: base of the LLM cache and the embedding cache."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

from .errors import ConfigError, DataError


class SQLiteFile:
    """Opens a short connection per use (a transaction that commits on success), creating the folder and
    the schema on first use; a lock serialises the threads of one process, ``timeout`` waits for others.

    A file that is not a database (corrupt, truncated, something else), a full disk or a folder that cannot
    be created are project errors (:class:`DataError`, :class:`ConfigError`) saying what to do, never a
    ``sqlite3`` traceback."""

    schema: str = ""
    timeout: float = 30.0
    wal: bool = False

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
                    if self.wal:
                        conn.execute("PRAGMA journal_mode=WAL")
                    conn.executescript(self.schema)
                    self._ready = True
                with conn:
                    yield conn
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            finally:
                conn.close()

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
        if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
            what = f"is not a readable SQLite database ({text}); delete it (it is a cache: it is rebuilt)"
        elif "full" in text:
            what = f"cannot be written ({text}); free some space and try again"
        elif "locked" in text:
            what = f"is busy ({text}): another process holds it longer than {self.timeout:.0f} s; try again"
        else:
            what = f"cannot be used ({type(exc).__name__}: {text}); check the file and its folder"
        return DataError(what, path=str(self.path))
