"""Appends and retractions of :class:`~tkgqa.kg.duckdb_store.DuckDBStore`, each ONE transaction of any size.

**All or nothing.** An append stages every fact (encoded in chunks, so memory stays bounded by the rows,
not by Python objects) in a temporary table, inserts the new rows into both copies of the facts, writes
the new names and commits — one ``BEGIN … COMMIT``. Anything that goes wrong before the commit (a bad
fact, a transaction time before the store's last write, the iterable raising, Ctrl+C, a killed process)
rolls the whole append back: no row, no name and no clock tick is kept, on disk or in memory.

**The vocabulary moves only on commit.** New names get ids after the store's (:class:`PendingNames`); the
store's name → id maps (``has_entity``, lookups) learn them after the commit. Just before the commit the new
names are appended to the id → name lists, so a reader on another thread that sees the committed rows can
decode them; a failed commit removes them again. The transaction time (``last_tx``) is advanced only on
commit too, so a refused write leaves the clock where it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..time import NEG_INF, POS_INF
from .duckdb_schema import CLUSTERED_COPIES, FACT_COLUMNS, FACT_KEY
from .fact import Fact
from .validate import check_name

if TYPE_CHECKING:
    from .duckdb_schema import Shared

CHUNK = 65_536  # facts encoded and staged at a time (all in the one transaction)


class PendingNames:
    """Names an open write has met that the store does not know yet: ids after the store's own."""

    def __init__(self, known: list[str], known_id: dict[str, int]) -> None:
        self.known, self.known_id = known, known_id
        self.base = len(known)
        self.new: list[str] = []
        self.new_id: dict[str, int] = {}

    def id(self, name: str) -> int:
        i = self.known_id.get(name)
        if i is None:
            i = self.new_id.get(name)
            if i is None:
                check_name(name)  # the one rule for names (tkgqa.kg.validate), on each new name
                i = self.new_id[name] = self.base + len(self.new)
                self.new.append(name)
        return i


def encode(f: Fact, ents: PendingNames, rels: PendingNames) -> tuple[int, ...]:
    """``(s, r, o, t0, t1, g0, g1)`` of ``f`` (first/last day, granularity; 0 = open end)."""
    t0 = f.start.first_day if f.start else NEG_INF
    t1 = f.end.last_day if f.end else POS_INF
    g0 = int(f.start.granularity) if f.start else 0
    g1 = int(f.end.granularity) if f.end else 0
    return (ents.id(f.subject), rels.id(f.relation), ents.id(f.object), t0, t1, g0, g1)


def _chunks(facts: Iterable[Fact], size: int) -> Iterator[list[Fact]]:
    chunk: list[Fact] = []
    for f in facts:
        chunk.append(f)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def next_tx(sh: Shared, at: int | None) -> int:
    """The transaction time of the next write (``at`` checked by the caller, or now), never before the
    last one; not recorded until the write commits (:func:`commit_tx`)."""
    import time as _time

    from ..errors import ConfigError
    from .duckdb_schema import tx_datetime

    if at is None:
        return max(_time.time_ns() // 1000, sh.last_tx + 1)
    if at < sh.last_tx:
        raise ConfigError(
            f"transaction time {tx_datetime(at).isoformat()} is before the store's last write "
            f"({tx_datetime(sh.last_tx).isoformat()}); history is append-only"
        )
    return at


def _stage(cur: Any, facts: Iterable[Fact], ents: PendingNames, rels: PendingNames, chunk: int) -> int:
    """Encode ``facts`` into the temporary table ``staged`` (with their position); returns how many."""
    import pyarrow as pa

    cur.execute(
        "CREATE OR REPLACE TEMP TABLE staged (pos BIGINT, s INTEGER, r INTEGER, o INTEGER, t0 INTEGER, "
        "t1 INTEGER, g0 UTINYINT, g1 UTINYINT)"
    )
    n = 0
    for part in _chunks(facts, chunk):
        rows = [encode(f, ents, rels) for f in part]
        cols = list(zip(*rows, strict=True))
        table = pa.table(
            {"pos": pa.array(range(n, n + len(rows)), pa.int64())}
            | {c: pa.array(v, pa.int64()) for c, v in zip(FACT_COLUMNS, cols, strict=True)}
        )
        cur.register("chunk", table)
        cur.execute("INSERT INTO staged SELECT * FROM chunk")
        cur.unregister("chunk")
        n += len(rows)
    return n


def _write_names(cur: Any, table: str, names: PendingNames) -> None:
    import pyarrow as pa

    if names.new:
        ids = range(names.base, names.base + len(names.new))
        cur.register("vocab", pa.table({"id": pa.array(ids, pa.int64()), "name": names.new}))
        cur.execute(f"INSERT INTO {table} SELECT id, name FROM vocab")
        cur.unregister("vocab")


def append_facts(
    sh: Shared,
    cur: Any,
    facts: Iterable[Fact],
    at: int | None,
    chunk: int = CHUNK,
    sink: list[tuple[int, ...]] | None = None,
) -> int:
    """Append ``facts`` (duplicates of live facts, and repeats within ``facts``, skipped: the first stays)
    in one transaction at transaction time ``at`` (or now). Returns how many rows were added; ``sink``
    receives the added rows ``(s, r, o, t0, t1, g0, g1)`` in id order once they are committed."""
    with sh.lock:
        ents, rels = PendingNames(sh.ent, sh.ent_id), PendingNames(sh.rel, sh.rel_id)
        tx = next_tx(sh, at)
        n_ent, n_rel = len(sh.ent), len(sh.rel)
        cur.execute("BEGIN")
        try:
            if not _stage(cur, facts, ents, rels, chunk):  # nothing to append: no write, no clock tick
                _rollback(cur)
                return 0
            rows: list[tuple[int, ...]] = []
            added = _insert_new(cur, sh.next_id, tx, rows)
            cur.execute("DROP TABLE staged")
            _write_names(cur, "entities", ents)
            _write_names(cur, "relations", rels)
            sh.ent.extend(ents.new)  # decodable by readers once committed; not yet looked up by name
            sh.rel.extend(rels.new)
            cur.execute("COMMIT")
        except BaseException:
            _rollback(cur)
            del sh.ent[n_ent:], sh.rel[n_rel:]
            raise
        sh.ent_id.update(ents.new_id)
        sh.rel_id.update(rels.new_id)
        sh.next_id += added
        if added:
            sh.last_tx = tx
        if sink is not None:
            sink.extend(rows)
        return added


def _insert_new(cur: Any, first_id: int, tx: int, rows: list[tuple[int, ...]]) -> int:
    """Insert the staged rows that are new (not live already; the first of repeats) into both copies of
    the facts, with ids from ``first_id`` in staging order; returns how many (and puts them in ``rows``)."""
    cur.execute(
        f"""CREATE OR REPLACE TEMP TABLE new_rows AS
        SELECT ? + row_number() OVER (ORDER BY b.pos) - 1 AS id, {", ".join(FACT_COLUMNS)},
            ?::BIGINT AS recorded_at, NULL::BIGINT AS retracted_at
        FROM (SELECT * FROM staged
            QUALIFY row_number() OVER (PARTITION BY s, r, o, t0, t1 ORDER BY pos) = 1) b
        WHERE NOT EXISTS (SELECT 1 FROM facts f WHERE f.retracted_at IS NULL
            AND f.s = b.s AND f.r = b.r AND f.o = b.o AND f.t0 = b.t0 AND f.t1 = b.t1)""",
        [first_id, tx],
    )
    for table, order in CLUSTERED_COPIES:
        cur.execute(f"INSERT INTO {table} SELECT * FROM new_rows ORDER BY {order}, t0, id")
    rows.extend(cur.execute(f"SELECT {', '.join(FACT_COLUMNS)} FROM new_rows ORDER BY id").fetchall())
    cur.execute("DROP TABLE new_rows")
    return len(rows)


def retract_keys(
    sh: Shared, cur: Any, keys: set[tuple[int, ...]], at: int | None, sink: list[int] | None = None
) -> int:
    """Set ``retracted_at`` on the live rows with these ``(s, r, o, t0, t1)`` keys, in one transaction;
    ``sink`` receives the ids of the rows retracted once committed."""
    import pyarrow as pa

    with sh.lock:
        tx = next_tx(sh, at)
        cols = list(zip(*keys, strict=True))
        cur.register(
            "gone", pa.table({c: pa.array(v, pa.int64()) for c, v in zip(FACT_KEY, cols, strict=True)})
        )
        cur.execute("BEGIN")
        try:
            for table, _ in reversed(CLUSTERED_COPIES):  # both copies; the ids are the second's (facts)
                found = cur.execute(
                    f"""UPDATE {table} SET retracted_at = ? FROM gone g WHERE {table}.retracted_at IS NULL
                    AND {table}.s = g.s AND {table}.r = g.r AND {table}.o = g.o
                    AND {table}.t0 = g.t0 AND {table}.t1 = g.t1 RETURNING {table}.id""",
                    [tx],
                ).fetchall()
            cur.execute("COMMIT")
        except BaseException:
            _rollback(cur)
            raise
        finally:
            cur.unregister("gone")
        sh.last_tx = tx
        if sink is not None:
            sink.extend(int(i) for (i,) in found)
    return len(found)


def _rollback(cur: Any) -> None:
    """Roll back the open transaction (nothing to do when the failure came before ``BEGIN`` took)."""
    with contextlib.suppress(Exception):  # no transaction open: nothing was written
        cur.execute("ROLLBACK")
