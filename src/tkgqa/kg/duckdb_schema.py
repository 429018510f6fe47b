"""The DuckDB side of :class:`~tkgqa.kg.duckdb_store.DuckDBStore`: the schema, opening a database (the
one-writer rule), the state a store and its views share, and transaction-time values."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError
from ..sanitize import shorten
from ..time import TimePoint

if TYPE_CHECKING:
    from .duckdb_core import TxLog
    from .memory import TemporalKG

SCHEMA_VERSION = "1"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id BIGINT NOT NULL, s INTEGER NOT NULL, r INTEGER NOT NULL, o INTEGER NOT NULL,
    t0 INTEGER NOT NULL, t1 INTEGER NOT NULL, g0 UTINYINT NOT NULL, g1 UTINYINT NOT NULL,
    recorded_at BIGINT NOT NULL, retracted_at BIGINT);
CREATE TABLE IF NOT EXISTS facts_by_o AS SELECT * FROM facts LIMIT 0;
CREATE TABLE IF NOT EXISTS entities (id INTEGER NOT NULL, name VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS relations (id INTEGER NOT NULL, name VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS labels (name VARCHAR NOT NULL, label VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key VARCHAR NOT NULL, value VARCHAR NOT NULL);
"""
TxTime = datetime | date | str | int
TABLES = ("facts", "facts_by_o", "entities", "relations", "labels", "meta")
#: A fact row's encoded columns, in the tables' order: entity/relation ids, first/last day, granularities.
FACT_COLUMNS = ("s", "r", "o", "t0", "t1", "g0", "g1")
#: What makes a live row the same fact (the dedup of appends, the key of a retraction).
FACT_KEY = FACT_COLUMNS[:5]
#: The two copies of the facts and the column each is clustered by (then ``t0``, ``id``), so that DuckDB's
#: zone maps skip most row groups on subject lookups and on object lookups; every write goes to both.
CLUSTERED_COPIES = (("facts", "s"), ("facts_by_o", "o"))


def copy_to_scan(subject: str | None, object: str | None) -> str:
    """The copy of the facts to scan: the one clustered by object for object-only patterns."""
    return "facts_by_o" if subject is None and object is not None else "facts"


def incident_rows(where: str, subjects: str, objects: str) -> str:
    """SQL of the rows meeting ``where`` with subject in ``subjects`` (read from ``facts``, clustered by
    subject) or object in ``objects`` (from ``facts_by_o``, clustered by object; a fact of both once). The
    parameters of ``where`` are needed twice."""
    return (
        f"SELECT * FROM facts WHERE {where} AND s IN ({subjects}) UNION ALL "
        f"SELECT * FROM facts_by_o WHERE {where} AND o IN ({objects}) AND s NOT IN ({subjects})"
    )


def id_list(ids: Iterable[int]) -> str:
    """An SQL list of ids (ints from the store's own vocabulary, never user text)."""
    return ", ".join(str(int(i)) for i in ids)


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError:  # pragma: no cover - depends on the environment
        raise ConfigError("the DuckDB store needs duckdb and pyarrow: pip install 'tkgqa[store]'") from None
    return duckdb


#: The transaction times a store can hold: microseconds of the years 1..9999 (what ``datetime`` can show).
MIN_TX = round(datetime(1, 1, 1, tzinfo=UTC).timestamp() * 1_000_000)
MAX_TX = round(datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC).timestamp() * 1_000_000)
_TX_FORMS = (
    "a datetime (naive = UTC), a date (its midnight, UTC), ISO 8601 text such as 2026-11-23T16:00:00, or an "
    "int of microseconds since 1970-01-01 UTC"
)


def tx_micros(t: TxTime) -> int:
    """A transaction time as microseconds since the Unix epoch (UTC): one of :data:`_TX_FORMS`. Anything
    else (a float, ``None``, a bool, a time outside the years 1..9999) is a :class:`ConfigError` saying
    what is accepted. (An int is microseconds, never a year: transaction times are instants; valid-time
    arguments such as ``as_of(2015)`` take years.)"""
    if isinstance(t, bool) or not isinstance(t, datetime | date | str | int):
        raise ConfigError(f"bad transaction time {shorten(repr(t))} ({type(t).__name__}); use {_TX_FORMS}")
    if isinstance(t, str):
        try:
            t = datetime.fromisoformat(t.strip())
        except ValueError:
            raise ConfigError(f"bad transaction time {shorten(str(t))}; use {_TX_FORMS}") from None
    if isinstance(t, int):
        micros = t
    else:
        if not isinstance(t, datetime):
            t = datetime(t.year, t.month, t.day)
        if t.tzinfo is None:
            t = t.replace(tzinfo=UTC)
        try:
            micros = round(t.timestamp() * 1_000_000)
        except (OverflowError, ValueError, OSError):
            micros = MIN_TX - 1
    if not MIN_TX <= micros <= MAX_TX:
        raise ConfigError(
            f"transaction time {shorten(repr(t))} is outside the years 1..9999; use {_TX_FORMS}"
        )
    return micros


def tx_datetime(micros: int) -> datetime:
    return datetime.fromtimestamp(micros / 1_000_000, tz=UTC)


@dataclass
class Shared:
    """What a store and its views share: the connection, the vocabulary, the writer lock, the clock."""

    con: Any
    path: Path | None
    read_only: bool
    ent: list[str] = field(default_factory=list)
    ent_id: dict[str, int] = field(default_factory=dict)
    rel: list[str] = field(default_factory=list)
    rel_id: dict[str, int] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    next_id: int = 0
    last_tx: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)
    local: threading.local = field(default_factory=threading.local)
    points: dict[int, TimePoint] = field(default_factory=dict)
    core: TemporalKG | None = None  # the read path: snapshot of the core + delta (tkgqa.kg.duckdb_core)
    rebuild: threading.Thread | None = None  # a snapshot rebuild in progress
    memory_limit: str | None = None  # DuckDB's buffer pool cap as given to ``connect`` (None: DuckDB's)
    txlog: TxLog | None = None  # when rows were recorded/retracted, for known_at (tkgqa.kg.duckdb_core)
    txlog_read: bool = False  # whether ``txlog`` was read (it stays None when ids do not follow time)


def release_buffers(sh: Shared) -> None:
    """Evict the blocks DuckDB cached while the store was opened (the scans of :func:`load_state` and of a
    snapshot build: 20 MiB at 5M facts, far more after a build) when the reads no longer need them (the
    snapshot serves them): lowering ``memory_limit`` evicts unpinned blocks, then the limit is put back.
    Only while no other thread can be reading (on open): a query running meanwhile could fail for memory."""
    con = sh.con
    try:
        con.execute("SET memory_limit = '1MB'")
    except _duckdb().Error:  # the cache is only a cost: kept when DuckDB will not shrink it
        pass
    if sh.memory_limit:
        con.execute("SET memory_limit = ?", [sh.memory_limit])
    else:
        con.execute("RESET memory_limit")


def connect(path: Path | None, read_only: bool, memory_limit: str | None = None) -> Shared:
    duckdb = _duckdb()
    try:
        config = {"memory_limit": memory_limit} if memory_limit else {}
        con = duckdb.connect(
            str(path) if path is not None else ":memory:", read_only=read_only, config=config
        )
    except duckdb.IOException as exc:
        said = str(exc).splitlines()[0][:200]
        if "not a valid DuckDB database" in said:
            raise DataError(f"not a DuckDB store ({said})", path=str(path)) from None
        if "lock" not in said.lower():  # a folder that cannot be written, a disk error: said as it is
            raise ConfigError(f"cannot open DuckDB store {str(path)!r} ({said})") from None
        raise ConfigError(
            f"cannot open DuckDB store {str(path)!r} ({said}); another process holds it read-write: only one "
            "writer at a time, readers open it read_only=True when none runs"
        ) from None
    except duckdb.Error as exc:
        raise DataError(f"not a DuckDB store ({str(exc).splitlines()[0][:200]})", path=str(path)) from None
    sh = Shared(con, path, read_only, memory_limit=memory_limit)
    tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if not read_only and not tables:  # a new (empty) database: make it a store
        con.execute("BEGIN")
        con.execute(_SCHEMA)
        con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
        con.execute("COMMIT")
        tables = set(TABLES)
    if not set(TABLES) <= tables:  # another program's database: refused, and left as it was
        con.close()
        raise DataError(
            "not a tkgqa DuckDB store ("
            + (
                f"it has tables {', '.join(sorted(tables)[:5])}, not tkgqa's"
                if tables
                else "an empty database"
            )
            + "); "
            "it was not changed — create a store with `tkgqa kg convert KG FILE.duckdb`",
            path=str(path),
        )
    load_state(sh)
    return sh


def load_state(sh: Shared) -> None:
    """(Re)read the vocabulary, labels, next fact id and last transaction time from the database."""
    con = sh.con
    # one column fetched as an array, not a tuple per row: at 100k names ~5 MiB less left behind
    sh.ent = con.execute("SELECT name FROM entities ORDER BY id").fetchnumpy()["name"].tolist()
    sh.rel = con.execute("SELECT name FROM relations ORDER BY id").fetchnumpy()["name"].tolist()
    sh.ent_id = {n: i for i, n in enumerate(sh.ent)}
    sh.rel_id = {n: i for i, n in enumerate(sh.rel)}
    sh.labels = dict(con.execute("SELECT name, label FROM labels").fetchall())
    next_id, last = con.execute(
        "SELECT coalesce(max(id) + 1, 0), "
        "coalesce(max(greatest(recorded_at, coalesce(retracted_at, 0))), 0) FROM facts"
    ).fetchone()
    sh.next_id, sh.last_tx = int(next_id), int(last)
    sh.txlog, sh.txlog_read = None, False  # read again on the next known_at (rows may have been written)
