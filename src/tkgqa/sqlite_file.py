"""One SQLite file under ``TKGQA_HOME`` shared by threads: base of the LLM cache and the embedding cache."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path


class SQLiteFile:
    """Opens a short connection per use (a transaction that commits on success), creating the folder and
    the schema on first use; a lock serialises the threads of one process, ``timeout`` waits for others."""

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
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=self.timeout)
            try:
                if not self._ready:
                    if self.wal:
                        conn.execute("PRAGMA journal_mode=WAL")
                    conn.executescript(self.schema)
                    self._ready = True
                with conn:
                    yield conn
            finally:
                conn.close()
