"""The schema of ``llm.sqlite`` (response cache + run log), versioned with ``PRAGMA user_version``.

:data:`MIGRATIONS` is append-only: ``MIGRATIONS[n]`` takes a file from version ``n`` to ``n + 1`` and the
file's version is ``len(MIGRATIONS)`` afterwards. Never edit or reorder a published step; add a new one.
Files written before versioning existed read as version 0 and hold the tables of step 1 already, so every
step is idempotent (``IF NOT EXISTS``, columns added only when missing).

Version 3 tables (version 3 added ``calls.stage``):

- ``responses``: the cache — ``key`` (sha256 of backend namespace + request), the namespace, the request
  (no credentials), the response JSON.
- ``requests``: every request the run log refers to, by the same key (content-addressed, stored once).
- ``calls``: one row per call (``kind='call'``) or parse failure (``kind='parse_failure'``): method,
  question id, stage (the prompt task, see :func:`~tkgqa.llm.cache.llm_context`), backend, the model that
  answered (``model``) and the one asked for (``request_model``, which prices the call), tokens, latency,
  cached, error, ``request_key`` → ``requests.key`` and the ``response`` text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ..errors import ConfigError

Migration = Callable[[sqlite3.Connection], None]


def _add_column(conn: sqlite3.Connection, table: str, name: str, decl: str) -> None:
    have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    if name not in have:
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")


def _v1_initial(conn: sqlite3.Connection) -> None:
    """The schema as it was before versioning: the cache and the run log."""
    conn.execute(
        """CREATE TABLE IF NOT EXISTS responses (
            key TEXT PRIMARY KEY, backend TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL,
            created REAL NOT NULL)"""
    )
    conn.execute(
        """CREATE TABLE IF NOT EXISTS calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, kind TEXT NOT NULL DEFAULT 'call',
            method TEXT, question_id TEXT, backend TEXT, model TEXT,
            prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
            latency_s REAL NOT NULL DEFAULT 0, cached INTEGER NOT NULL DEFAULT 0, error TEXT)"""
    )
    conn.execute("CREATE INDEX IF NOT EXISTS calls_question ON calls (method, question_id)")


def _v2_request_links(conn: sqlite3.Connection) -> None:
    """Each call row links to its stored request and keeps the response text; the model asked for."""
    conn.execute(
        """CREATE TABLE IF NOT EXISTS requests (
            key TEXT PRIMARY KEY, backend TEXT NOT NULL, request TEXT NOT NULL, created REAL NOT NULL)"""
    )
    _add_column(conn, "calls", "request_key", "TEXT")
    _add_column(conn, "calls", "response", "TEXT")
    _add_column(conn, "calls", "request_model", "TEXT")
    conn.execute("CREATE INDEX IF NOT EXISTS calls_qid ON calls (question_id)")


def _v3_call_stage(conn: sqlite3.Connection) -> None:
    """Each call row names its prompt task (``stage``, e.g. TimeR4's ``rewrite``/``answer``; ``NULL`` for
    calls logged before, or by single-stage methods): what a cassette (``tkgqa llm export``) records."""
    _add_column(conn, "calls", "stage", "TEXT")


#: Append-only: ``MIGRATIONS[n]`` migrates version ``n`` to ``n + 1``.
MIGRATIONS: tuple[Migration, ...] = (_v1_initial, _v2_request_links, _v3_call_stage)
SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, path: object = "") -> int:
    """Bring the file behind ``conn`` to :data:`SCHEMA_VERSION` (one exclusive transaction; a concurrent
    opener waits, then finds nothing to do). Returns the version found before. ConfigError when the file
    is newer than this tkgqa."""
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise ConfigError(
            f"{path or 'the LLM cache'} has schema version {found}, newer than this tkgqa knows "
            f"({SCHEMA_VERSION}); upgrade tkgqa, or point TKGQA_HOME / --db at another file"
        )
    if found == SCHEMA_VERSION:
        return found
    if conn.in_transaction:
        conn.commit()
    conn.execute("BEGIN IMMEDIATE")
    try:
        start = schema_version(conn)
        for step in MIGRATIONS[start:]:
            step(conn)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return found
