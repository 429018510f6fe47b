"""``DuckDBStore``: a persistent, bi-temporal :class:`~tkgqa.kg.KGStore` on DuckDB (issue #14).

**Layout.** One DuckDB database (a ``.duckdb`` file, or in memory): ``facts(id, s, r, o, t0, t1, g0, g1,
recorded_at, retracted_at)`` with the same dictionary-encoded columns as the in-memory store
(:mod:`tkgqa.kg.index`: entity/relation ids, first/last day, start/end granularity, 0 = open end), plus
``entities``, ``relations``, ``labels`` and ``meta``. ``id`` is the insertion order (iteration and ties
follow it), so the physical row order is free: ``facts`` is clustered by ``(s, t0)`` and a second copy,
``facts_by_o``, by ``(o, t0)``, so that DuckDB's zone maps skip most row groups on subject lookups, object
lookups and (one lookup each) incident facts; writes go to both copies in one transaction. Only the
vocabulary (names ↔ ids) and labels are held in Python memory; facts stay on disk and are read per query,
so a 20M-fact store answers with a resident set far below its data size (``bench/store_scale.py``).

**Reads at in-memory speed (issue #31).** The live store and its ``as_of`` views answer from a memory-mapped
snapshot of the compact core (:mod:`tkgqa.kg.duckdb_core`: ``<file>.duckdb.core/`` beside the database,
rebuilt when stale, never blocking readers) plus the rows appended since, held in memory: the same code as
the in-memory store, so the same answers; ``known_at`` views (transaction time) too, as the core restricted
to the rows recorded by then less those retracted by then. ``history`` reads DuckDB with SQL, as below.

**One meaning, one place.** SQL only selects candidate rows — the day-window overlap and the ``as_of`` window
of :func:`~tkgqa.kg.memory_walks._clipped_window` — and aggregates them; the rules of :mod:`tkgqa.kg.base` are
then applied by the shared Python code (:func:`~tkgqa.kg.base.clip_at` for snapshots, the same ranking and
"latest end" rule as the reference store), and the ARI operators of :mod:`tkgqa.kg.operators` run unchanged on
the facts returned.

**Bi-temporal.** Each row also has a *transaction time*: ``recorded_at`` (when the store learnt it) and
``retracted_at`` (when it was withdrawn, or NULL), in microseconds since the Unix epoch (UTC), strictly
increasing per store. :meth:`DuckDBStore.add` / :meth:`~DuckDBStore.append` insert rows and
:meth:`~DuckDBStore.retract` only sets ``retracted_at`` on live rows: no row is ever deleted or changed
otherwise, so :meth:`~DuckDBStore.known_at` can answer "what did the KG say at transaction time t".
:meth:`~DuckDBStore.as_of` keeps its valid-time meaning; the two views compose
(``store.known_at(t).as_of("2015")``). A retracted fact may be added again (a new row).

**One writer, many readers.** DuckDB lets one process open a database file read-write, or any number of
processes open it read-only, never both. The rule: the process that serves a persistent store (``tkgqa
serve --kg store.duckdb --allow-append``; without appends it opens it read-only) holds its single
read-write connection; its threads read through their own
cursors (MVCC: a reader sees the last committed append) and appends/retractions are serialised by the
store's lock, each one transaction. Other processes open the file ``read_only=True`` when no writer runs
(e.g. an evaluation), or read a Parquet export (``tkgqa kg convert store.duckdb DIR --to parquet``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError, NotFoundError
from ..time import NEG_INF, POS_INF, Granularity, TimeArg, TimePoint, civil_from_days
from .base import FactQuery, Hop, HopQuery, KGStore, StoreBase, TimeQuery, clip_at, entity_names, query_window
from .duckdb_core import adopt_core, ensure_core, refresh, refresh_in_background, tx_log, wait_for_rebuild
from .duckdb_schema import (
    CLUSTERED_COPIES,
    FACT_COLUMNS,
    TxTime,
    connect,
    copy_to_scan,
    id_list,
    incident_rows,
    load_state,
    release_buffers,
    tx_datetime,
    tx_micros,
)
from .duckdb_write import append_facts, next_tx, retract_keys
from .fact import Fact, label_of
from .snapshot import KGSnapshot

if TYPE_CHECKING:
    import duckdb

    from .memory import TemporalKG

BATCH = 65_536
_COLS = ", ".join(FACT_COLUMNS)
_FEW = 8  # frontiers up to this size are looked up per side (zone maps), larger ones scanned once


class DuckDBStore(StoreBase):
    """A :class:`~tkgqa.kg.KGStore` on DuckDB, persistent when given a ``path`` (see the module docstring).

    ``DuckDBStore(facts, labels=..., name=...)`` builds an in-memory database (as the other backends do);
    ``DuckDBStore.open(path)`` opens (or creates) a ``.duckdb`` file."""

    def __init__(
        self,
        facts: Iterable[Fact] = (),
        *,
        labels: Mapping[str, str] | None = None,
        name: str = "duckdb",
        path: str | Path | None = None,
        read_only: bool = False,
        display_underscores: bool = True,
        memory_limit: str | None = None,
        snapshot: bool = True,
    ) -> None:
        self.name = name
        self.display_underscores = display_underscores
        self._sh = connect(Path(path) if path is not None else None, read_only, memory_limit)
        self._root: DuckDBStore = self
        self._cutoff: TimePoint | None = None
        self._tx: int | None = None
        if snapshot:  # else every read is SQL (e.g. a file opened only to check or copy it)
            ensure_core(self._sh)
            if self._sh.core is not None:
                release_buffers(self._sh)
        if labels:
            self.set_labels(labels)
        if not read_only:
            self.add(facts)

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        read_only: bool = False,
        name: str | None = None,
        memory_limit: str | None = None,
        create: bool = True,
        snapshot: bool = True,
    ) -> DuckDBStore:
        """Open the store file at ``path``; a missing one is created when ``create`` and not ``read_only``
        (``tkgqa serve`` creates one only with ``--create``: a typo must not serve an empty store). A DuckDB
        file of another program (tables, but not tkgqa's) is refused unchanged. ``memory_limit`` (e.g.
        ``"512MB"``) caps DuckDB's buffer pool (default: DuckDB's, 80% of RAM). ``snapshot=False`` skips the
        read path's snapshot (:mod:`tkgqa.kg.duckdb_core`): every read is then SQL."""
        p = Path(path).expanduser()
        if p.is_dir():
            raise DataError(
                "is a folder, not a DuckDB store file (a Parquet export? tkgqa kg convert DIR FILE.duckdb "
                "imports it)",
                path=str(p),
            )
        if (read_only or not create) and not p.is_file():
            raise NotFoundError(
                f"DuckDB store {str(p)!r} does not exist; check the path (tkgqa kg convert KG FILE.duckdb "
                "makes one from a KG file)"
            )
        return cls(
            name=name or p.stem, path=p, read_only=read_only, memory_limit=memory_limit, snapshot=snapshot
        )

    @classmethod
    def from_kg(
        cls, kg: TemporalKG, path: str | Path | None = None, *, name: str | None = None
    ) -> DuckDBStore:
        """A store holding the facts of the in-memory ``kg`` (bulk copy of its encoded columns, clustered by
        subject and start day), written to ``path`` if given (which must be new or empty)."""
        import numpy as np
        import pyarrow as pa

        store = cls(name=name or kg.name, path=path)
        if len(store):
            raise ConfigError(f"store {str(path)!r} already holds facts; convert into a new file")
        ents, rels, cols, _ = kg.to_arrays()
        sh, cur = store._sh, store._cur()
        with sh.lock:
            tx = next_tx(sh, None)
            cur.execute("BEGIN")
            try:
                for table, names in (("entities", ents), ("relations", rels)):
                    cur.register(
                        "vocab", pa.table({"id": np.arange(len(names), dtype=np.int64), "name": names})
                    )
                    cur.execute(f"INSERT INTO {table} SELECT id, name FROM vocab")
                    cur.unregister("vocab")
                cur.register("bulk", pa.table({"id": np.arange(len(cols["s"]), dtype=np.int64), **cols}))
                for table, order in CLUSTERED_COPIES:
                    cur.execute(
                        f"INSERT INTO {table} SELECT id, {_COLS}, ?, NULL FROM bulk ORDER BY {order}, t0, id",
                        [tx],
                    )
                cur.unregister("bulk")
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            load_state(sh)
        adopt_core(sh, kg.to_arrays()[3], kg.bounds)  # ids are kg's: its core is the snapshot
        store.set_labels(kg.labels)
        return store

    # --- connection, clock ------------------------------------------------------------------------------
    def _cur(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor on the shared database (DuckDB connections are not shared across threads)."""
        local = self._sh.local
        cur = getattr(local, "cur", None)
        if cur is None:
            cur = local.cur = self._sh.con.cursor()
        return cur

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = self._cur().execute(sql, list(params)).fetchall()
        return rows

    def close(self) -> None:
        wait_for_rebuild(self._sh)
        self._sh.con.close()

    def refresh_snapshot(self) -> None:
        """Rebuild the memory-mapped snapshot of the core from the database now and swap it in (readers
        keep answering meanwhile; see :mod:`tkgqa.kg.duckdb_core`). ``tkgqa kg index`` calls it."""
        wait_for_rebuild(self._sh)
        refresh(self._sh)
        if self._sh.core is None:
            raise DataError(
                "this store's fact ids are not 0..n-1, so it has no snapshot; "
                "`tkgqa kg convert` it into a new file to renumber them",
                path=str(self.path),
            )

    def _reader(self) -> KGStore | None:
        """The core store answering this view (the live store, its ``known_at`` and ``as_of`` views), or
        ``None`` when the store has no core or no transaction log (answered with SQL)."""
        core = self._sh.core
        if core is None:
            return None
        if self._tx is not None:
            log = tx_log(self._sh)
            if log is None:
                return None
            core = log.view(core, self._tx)
        return core if self._cutoff is None else KGSnapshot(core, self._cutoff)

    def __enter__(self) -> DuckDBStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def path(self) -> Path | None:
        return self._sh.path

    @property
    def last_transaction(self) -> datetime | None:
        """When the store was last written (``None`` if never)."""
        return tx_datetime(self._sh.last_tx) if self._sh.last_tx else None

    # --- vocabulary ---------------------------------------------------------------------------------------
    @property
    def entities(self) -> Sequence[str]:
        return self._sh.ent

    @property
    def relations(self) -> Sequence[str]:
        return self._sh.rel

    @property
    def live(self) -> DuckDBStore:
        return self._root

    @property
    def labels(self) -> Mapping[str, str]:
        return self._sh.labels

    def has_entity(self, name: str) -> bool:
        return name in self._sh.ent_id

    def has_relation(self, name: str) -> bool:
        return name in self._sh.rel_id

    def label(self, name: str) -> str:
        return label_of(name, self._sh.labels, self.display_underscores)

    def set_labels(self, labels: Mapping[str, str]) -> None:
        self._sh.labels.update(labels)
        if self._sh.read_only or not labels:
            return
        cur = self._cur()
        with self._sh.lock:
            cur.execute("BEGIN")
            cur.executemany("DELETE FROM labels WHERE name = ?", [[k] for k in labels])
            cur.executemany("INSERT INTO labels VALUES (?, ?)", [[k, v] for k, v in labels.items()])
            cur.execute("COMMIT")

    # --- SQL building -------------------------------------------------------------------------------------
    def _where(self, time: TimeQuery = None) -> tuple[list[str], list[Any]]:
        """Conditions (and parameters) of the rows this store shows that share a day with ``time``: the
        visible transaction state, then the valid-time window clipped at the ``as_of`` cutoff."""
        conds: list[str] = []
        params: list[Any] = []
        if self._tx is None:
            conds.append("retracted_at IS NULL")
        else:
            conds.append("recorded_at <= ? AND (retracted_at IS NULL OR retracted_at > ?)")
            params += [self._tx, self._tx]
        lo, hi = query_window(time)
        if self._cutoff is not None:  # memory_walks._clipped_window, the same window
            cut = self._cutoff.first_day
            lo, hi = min(lo, cut), min(hi, cut - 1)
        if hi < POS_INF:
            conds.append("t0 <= ?")
            params.append(hi)
        if lo > NEG_INF:
            conds.append("t1 >= ?")
            params.append(lo)
        return conds, params

    def _pattern(
        self, subject: str | None, relation: str | None, object: str | None, time: TimeQuery
    ) -> tuple[str, list[Any]] | None:
        """The WHERE clause of a pattern, or ``None`` when a name is unknown (no fact can match)."""
        conds, params = self._where(time)
        sh = self._sh
        for col, name, ids in (
            ("s", subject, sh.ent_id),
            ("r", relation, sh.rel_id),
            ("o", object, sh.ent_id),
        ):
            if name is not None:
                i = ids.get(name)
                if i is None:
                    return None
                conds.append(f"{col} = {int(i)}")
        return " AND ".join(conds), params

    def _point(self, day: int, gran: int) -> TimePoint | None:
        if not gran:
            return None
        key = day * 4 + gran
        cache = self._sh.points
        found = cache.get(key)
        if found is None:
            if len(cache) > 200_000:
                cache.clear()
            found = cache[key] = TimePoint(*civil_from_days(day)).coarsen(Granularity(gran))
        return found

    def _build(self, rows: Iterable[tuple[Any, ...]]) -> list[Fact]:
        """Facts of ``(s, r, o, t0, t1, g0, g1)`` rows, clipped at this view's cutoff."""
        ent, rel, point = self._sh.ent, self._sh.rel, self._point
        out = [Fact(ent[s], rel[r], ent[o], point(t0, g0), point(t1, g1)) for s, r, o, t0, t1, g0, g1 in rows]
        if self._cutoff is None:
            return out
        cut = self._cutoff.first_day
        return [clip_at(f, cut) for f in out]

    # --- queries ------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        reader = self._reader()
        return len(reader) if reader is not None else self.count()

    def __iter__(self) -> Iterator[Fact]:
        reader = self._reader()
        if reader is not None:
            yield from reader
            return
        conds, params = self._where()
        cur = self._sh.con.cursor()  # its own cursor: queries made while iterating must not reset it
        cur.execute(f"SELECT {_COLS} FROM facts WHERE {' AND '.join(conds)} ORDER BY id", params)
        try:
            while rows := cur.fetchmany(BATCH):
                yield from self._build(rows)
        finally:
            cur.close()

    def _query_facts(self, query: FactQuery) -> list[Fact]:
        reader = self._reader()
        if reader is not None:
            return reader.facts(query.subject, query.relation, query.object, query.time, limit=query.limit)
        where = self._pattern(query.subject, query.relation, query.object, query.time)
        if where is None or query.limit == 0:
            return []
        table = copy_to_scan(query.subject, query.object)
        sql = f"SELECT {_COLS} FROM {table} WHERE {where[0]} ORDER BY t0, id"
        if query.limit is not None:
            sql += f" LIMIT {int(query.limit)}"
        return self._build(self._q(sql, where[1]))

    def _query_count(self, query: FactQuery) -> int:
        reader = self._reader()
        if reader is not None:
            return reader.count(query.subject, query.relation, query.object, query.time)
        where = self._pattern(query.subject, query.relation, query.object, query.time)
        if where is None:
            return 0
        sql = f"SELECT count(*) FROM {copy_to_scan(query.subject, query.object)} WHERE {where[0]}"
        return int(self._q(sql, where[1])[0][0])

    def incident(self, entity: str, *, relation: str | None = None, time: TimeQuery = None) -> list[Fact]:
        reader = self._reader()
        if reader is not None:
            return reader.incident(entity, relation=relation, time=time)
        e = self._sh.ent_id.get(entity)
        where = self._pattern(None, relation, None, time)
        if e is None or where is None:
            return []
        sql = f"SELECT {_COLS}, id FROM ({incident_rows(where[0], str(e), str(e))}) ORDER BY t0, id"
        return self._build(row[:7] for row in self._q(sql, where[1] + where[1]))

    def _entity_ids(self, names: str | Iterable[str]) -> set[int]:
        get = self._sh.ent_id.get
        return {i for i in map(get, entity_names(names)) if i is not None}

    def _query_hop(self, query: HopQuery) -> Hop:
        reader = self._reader()
        if reader is not None:
            return reader.hop(
                query.frontier,
                time=query.time,
                visited=query.visited,
                new_facts_only=query.new_facts_only,
                max_neighbors=query.max_neighbors,
            )
        front, done = self._entity_ids(query.frontier), self._entity_ids(query.visited)
        if not front:
            return Hop(0, {}, ())
        conds, params = self._where(query.time)
        max_neighbors = query.max_neighbors
        if query.new_facts_only and done:
            conds.append(f"s NOT IN ({id_list(done)}) AND o NOT IN ({id_list(done)})")
        where, ids = " AND ".join(conds), id_list(front)
        if len(front) <= _FEW:  # a few entities: two lookups, each on the copy clustered by it
            met, params = incident_rows(where, ids, ids), params + params
        else:  # a wide frontier meets row groups everywhere: one scan of one copy
            met = f"SELECT * FROM facts WHERE {where} AND (s IN ({ids}) OR o IN ({ids}))"
        rows = self._q(f"SELECT s, r, o, count(*) FROM ({met}) GROUP BY s, r, o", params)
        rel = self._sh.rel
        relations: Counter[str] = Counter()
        ends: Counter[int] = Counter()
        skip = front | done
        for s, r, o, n in rows:
            relations[rel[r]] += n
            for e in (s, o):
                if e not in skip:
                    ends[e] += n
        neighbors: tuple[str, ...] = ()
        if max_neighbors != 0 and ends:
            ent = self._sh.ent
            ranked = sorted(ends, key=lambda e: (-ends[e], ent[e]))
            neighbors = tuple(ent[e] for e in ranked[:max_neighbors])
        return Hop(sum(relations.values()), dict(relations), neighbors)

    def relation_counts(self, entity: str | None = None) -> dict[str, int]:
        reader = self._reader()
        if reader is not None:
            return reader.relation_counts(entity)
        if entity is not None:
            return self.hop(entity, max_neighbors=0).relations
        conds, params = self._where()
        rows = self._q(f"SELECT r, count(*) FROM facts WHERE {' AND '.join(conds)} GROUP BY r", params)
        return {self._sh.rel[r]: int(n) for r, n in rows}

    def time_span(self, entity: str | None = None) -> tuple[TimePoint | None, TimePoint | None]:
        """SQL picks the candidates (the least start; the ends that may be the latest), Python applies
        the rule of :meth:`tkgqa.kg.KGStore.time_span` to them."""
        reader = self._reader()
        if reader is not None:
            return reader.time_span(entity)
        conds, params = self._where()
        rows_sql = f"SELECT * FROM facts WHERE {' AND '.join(conds)}"
        if entity is not None:
            e = self._sh.ent_id.get(entity)
            if e is None:
                return (None, None)
            rows_sql, params = incident_rows(" AND ".join(conds), str(e), str(e)), params + params
        # an end is known unless open, or clipped open at the view's cutoff; else the start counts
        known1 = "g1 > 0" if self._cutoff is None else f"(g1 > 0 AND t1 < {self._cutoff.first_day})"
        last_day = f"CASE WHEN {known1} THEN t1 ELSE t0 END"
        sql = f"""
            WITH v AS (SELECT t0, t1, g0, g1, {known1} AS k1 FROM ({rows_sql})),
            top AS (SELECT max({last_day}) AS d FROM v WHERE k1 OR g0 > 0)
            SELECT 0, min(t0::BIGINT * 4 + g0) FILTER (WHERE g0 > 0), NULL FROM v
            UNION ALL
            SELECT DISTINCT 1, CASE WHEN k1 THEN t1::BIGINT * 4 + g1 ELSE t0::BIGINT * 4 + g0 END, NULL
            FROM v, top WHERE (k1 OR g0 > 0) AND (CASE WHEN k1 THEN t1 ELSE t0 + 366 END) >= top.d
        """
        rows = self._q(sql, params)
        first = last = None
        lasts = []
        for kind, key, _ in rows:
            if key is None:
                continue
            point = self._point(int(key) >> 2, int(key) & 3)
            if kind == 0:
                first = point
            elif point is not None:
                lasts.append(point)
        if lasts:
            last = max(lasts, key=lambda p: (p.last_day, p.first_day))
        return (first, last)

    # --- views ----------------------------------------------------------------------------------------------
    def _view(self, cutoff: TimePoint | None, tx: int | None) -> DuckDBStore:
        view = object.__new__(DuckDBStore)
        view.display_underscores = self.display_underscores
        view._sh, view._root, view._cutoff, view._tx = self._sh, self._root, cutoff, tx
        parts = [self._root.name]
        if cutoff is not None:
            parts.append(f"<{cutoff}")
        if tx is not None:
            parts.append(f"@{tx_datetime(tx).isoformat()}")
        view.name = "".join(parts)
        return view

    def as_of(self, cutoff: TimeArg) -> DuckDBStore:
        """The valid-time snapshot (see :mod:`tkgqa.kg.base`); keeps this view's transaction time."""
        point = TimePoint.of(cutoff)
        return self._view(point if self._cutoff is None else min(point, self._cutoff), self._tx)

    def known_at(self, t: TxTime) -> DuckDBStore:
        """The transaction-time snapshot: what the store said at ``t`` (the facts recorded at or before
        ``t`` and not retracted by then). Read-only; composes with :meth:`as_of`."""
        micros = tx_micros(t)
        return self._view(self._cutoff, micros if self._tx is None else min(micros, self._tx))

    # --- writes ---------------------------------------------------------------------------------------------
    def _writable(self) -> None:
        if self._root is not self:
            raise ConfigError("a snapshot is read-only; add facts to the live store it was taken from")
        if self._sh.read_only:
            raise ConfigError(
                f"store {self.name!r} is open read-only; only the process holding the read-write "
                "connection (e.g. the service) may append"
            )

    def add(self, facts: Iterable[Fact]) -> int:
        """Append facts now (duplicates of live facts skipped); returns how many were new."""
        return self.append(facts)

    def append(self, facts: Iterable[Fact], *, at: TxTime | None = None) -> int:
        """Append facts recorded at transaction time ``at`` (default: now; never before the last write).

        One transaction whatever the number of facts (:mod:`tkgqa.kg.duckdb_write`): a refused or
        interrupted append keeps nothing — no row, no name, no clock tick."""
        self._writable()
        micros = None if at is None else tx_micros(at)
        sh = self._sh
        with sh.lock:  # the rows reach the core before another write (or a rebuild's swap) can
            rows: list[tuple[int, ...]] = []
            first = sh.next_id
            added = append_facts(sh, self._cur(), facts, micros, sink=rows)
            if sh.core is not None and rows:
                sh.core.append_rows(rows)  # type: ignore[arg-type]
            if sh.txlog is not None and rows:
                sh.txlog.recorded(sh.last_tx, first)
        refresh_in_background(sh)
        return added

    def _key(self, f: Fact) -> tuple[int, ...] | None:
        """``(s, r, o, t0, t1)`` of ``f``, or ``None`` when a name is unknown (no such fact is stored)."""
        sh = self._sh
        s, r, o = sh.ent_id.get(f.subject), sh.rel_id.get(f.relation), sh.ent_id.get(f.object)
        if s is None or r is None or o is None:
            return None
        return (s, r, o, f.start.first_day if f.start else NEG_INF, f.end.last_day if f.end else POS_INF)

    def retract(self, facts: Iterable[Fact], *, at: TxTime | None = None) -> int:
        """Withdraw live facts at transaction time ``at`` (default now): their rows get ``retracted_at``
        and drop out of the live store and of later ``known_at`` views. Returns how many were retracted."""
        self._writable()
        micros = None if at is None else tx_micros(at)
        keys = {key for f in facts if (key := self._key(f)) is not None}
        if not keys:
            return 0
        sh = self._sh
        with sh.lock:
            gone: list[int] = []
            n = retract_keys(sh, self._cur(), keys, micros, sink=gone)
            if sh.core is not None and gone:
                sh.core.withdraw(gone)
            if sh.txlog is not None and gone:
                sh.txlog.retracted(sh.last_tx, gone)
        return n

    def history(
        self, subject: str | None = None, relation: str | None = None, object: str | None = None
    ) -> list[tuple[Fact, datetime, datetime | None]]:
        """Every row ever recorded for the pattern, retracted ones included, in insertion order:
        ``(fact, recorded_at, retracted_at)``."""
        sh = self._sh
        conds = ["TRUE"]
        for col, name, ids in (
            ("s", subject, sh.ent_id),
            ("r", relation, sh.rel_id),
            ("o", object, sh.ent_id),
        ):
            if name is not None:
                if name not in ids:
                    return []
                conds.append(f"{col} = {ids[name]}")
        rows = self._q(
            f"SELECT {_COLS}, recorded_at, retracted_at FROM facts WHERE {' AND '.join(conds)} ORDER BY id"
        )
        facts = DuckDBStore._build(self._root, [row[:7] for row in rows])
        return [
            (f, tx_datetime(row[7]), None if row[8] is None else tx_datetime(row[8]))
            for f, row in zip(facts, rows, strict=True)
        ]

    def to_kg(self) -> TemporalKG:
        """The facts this store shows as an in-memory :class:`~tkgqa.kg.TemporalKG` (same vocabulary)."""
        import numpy as np

        from .memory import TemporalKG

        if self._cutoff is not None:
            return TemporalKG(self, labels=self.labels, name=self.name)
        conds, params = self._where()
        sql = f"SELECT {_COLS} FROM facts WHERE {' AND '.join(conds)} ORDER BY id"
        found = self._cur().execute(sql, params).fetchnumpy()
        cols = {c: np.asarray(found[c], dtype=np.int64) for c in FACT_COLUMNS}
        return TemporalKG.from_arrays(self.entities, self.relations, cols, labels=self.labels, name=self.name)
