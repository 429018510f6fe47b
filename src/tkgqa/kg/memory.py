"""``TemporalKG``: the fast in-memory store.

Layout: the compact columnar core of :mod:`tkgqa.kg.index` (int32 ids and day numbers, four sorted
permutations with CSR offsets; 62 bytes per fact), built by sorting or opened memory-mapped from the binary
cache (:mod:`tkgqa.kg.cache`). A lookup is an offset lookup and a few binary searches in one permutation, a
few microseconds whatever the KG size. :class:`~tkgqa.kg.Fact` objects are built only for the facts a query
returns (and kept in a bounded cache). Appended facts go to a small delta (Python dicts) that every query
also reads; the delta is folded into the core once it grows past a fraction of the store, so appends never
rebuild the index per call. ``as_of`` returns a view (:class:`~tkgqa.kg.snapshot.KGSnapshot`) with a
start-time cutoff applied inside each search and its facts clipped at the cutoff (an end on or after the
cutoff's first day reads as open; :func:`~tkgqa.kg.memory_walks._clipped_window` turns that into the index
search). The :class:`~tkgqa.kg.base.KGStore` methods that neighbourhood walks need (``incident``, ``hop``,
``relation_counts``, ``time_span``) run on the core, vectorised (:mod:`tkgqa.kg.memory_walks`).

**Threads: one writer, many readers.** Appends (and the compaction they trigger) are serialised by a writer
lock; readers take no lock. Everything a query reads of the core and delta is one :class:`State` object,
read once per call; compaction builds a new one and swaps it in (copy-on-write), so a reader sees either the
state before or after it, never a mix. Fact ids never change, so ids from one state are valid in every
later one. Within a state, an append writes the fact, then its row, then its index entries: a concurrent
reader sees it fully or not at all.

The persistent :class:`~tkgqa.kg.duckdb_store.DuckDBStore` reads through a store of this class too (its
snapshot of the core plus the rows appended since, :meth:`TemporalKG.append_rows`; retracted rows are
:meth:`TemporalKG.withdraw` n).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, NotFoundError
from ..time import NEG_INF, POS_INF, Granularity, TimeArg, TimePoint, civil_from_days
from .base import FactQuery, StoreBase, TimeQuery, query_window
from .fact import Fact, label_of
from .index import (
    COLUMNS,
    INDEX_KINDS,
    MAX_ENTITIES,
    MAX_RELATIONS,
    AnyArray,
    IntArray,
    State,
    build_core,
    core_bounds,
    empty_state,
    index_key,
)
from .memory_walks import _EMPTY, WalkMixin, _clipped_window
from .snapshot import KGSnapshot
from .validate import check_name

if TYPE_CHECKING:
    from .loaders import LoadReport

_SCALAR_FILL = 8  # batches up to this size read columns element-wise
_PRIME_MAX = 100_000  # precompute the TimePoints of a store with at most this many (day, granularity) pairs
FACT_CACHE_MAX = 1 << 20  # Fact objects kept (built for results); cleared when full (materialize lifts it)
#: appends compact (fold the delta into the sorted core) once the delta holds more facts than this, or than a
#: quarter of the core if that is more
COMPACT_AFTER = 50_000
Row = tuple[int, int, int, int, int, int, int]


class TemporalKG(WalkMixin, StoreBase):
    """In-memory temporal KG implementing :class:`tkgqa.kg.KGStore`."""

    def __init__(
        self,
        facts: Iterable[Fact] = (),
        *,
        labels: Mapping[str, str] | None = None,
        name: str = "kg",
        display_underscores: bool = True,
    ) -> None:
        self.name = name
        self.display_underscores = display_underscores
        self.load_report: LoadReport | None = None  # set by the loaders
        self._labels: dict[str, str] = dict(labels or {})
        self._ent: list[str] = []
        self._ent_id: dict[str, int] = {}
        self._rel: list[str] = []
        self._rel_id: dict[str, int] = {}
        self._st = empty_state()
        self._write_lock = threading.RLock()
        self._delta_seen: set[tuple[int, int, int, int, int]] = set()  # keys of the delta (dedup of appends)
        self._auto_compact = True  # False under the DuckDB store: its snapshot rebuild folds the delta
        self._tp_cache: dict[int, TimePoint] = {}  # day * 4 + granularity → shared TimePoint
        self._fcache: dict[int, Fact] = {}  # Fact objects built so far, by fact id
        self._fcache_max: int | None = FACT_CACHE_MAX
        # entity id → position in name order (ties of ``hop``), in a box shared with ``restricted`` views
        self._rank: list[IntArray | None] = [None]
        self.add(facts)
        self.compact()

    # --- construction -----------------------------------------------------------------------------
    @classmethod
    def from_arrays(
        cls,
        entities: Sequence[str],
        relations: Sequence[str],
        columns: Mapping[str, npt.NDArray[Any]],
        *,
        labels: Mapping[str, str] | None = None,
        name: str = "kg",
        index: Mapping[str, AnyArray] | None = None,
        bounds: tuple[int, bool] | None = None,
    ) -> TemporalKG:
        """Build from encoded columns (``s r o t0 t1 g0 g1``), e.g. out of the binary cache.

        ``index`` gives core arrays already built (:data:`~tkgqa.kg.index.CORE_ARRAYS`, e.g. memory-mapped
        from the cache): taken as they are when complete, else the permutations are rebuilt by sorting.
        ``bounds``: :func:`~tkgqa.kg.index.core_bounds` of the columns when known (saves a pass over them).
        ``entities``/``relations`` given as lists are used as they are (not copied)."""
        kg = cls(labels=labels, name=name)
        kg._ent = entities if isinstance(entities, list) else list(entities)
        kg._ent_id = {e: i for i, e in enumerate(kg._ent)}
        kg._rel = relations if isinstance(relations, list) else list(relations)
        kg._rel_id = {r: i for i, r in enumerate(kg._rel)}
        kg._st = kg._compacted(build_core(columns, len(kg._ent), len(kg._rel), index), bounds=bounds)
        return kg

    @property
    def bounds(self) -> tuple[int, bool]:
        """``(max_dur, ordered)`` of the core (see :func:`~tkgqa.kg.index.core_bounds`)."""
        return self._st.max_dur, self._st.ordered

    def to_arrays(self) -> tuple[list[str], list[str], dict[str, AnyArray], dict[str, AnyArray]]:
        """Entities, relations, encoded columns and the whole core (:data:`~tkgqa.kg.index.CORE_ARRAYS`),
        after compaction."""
        self.compact()
        st = self._st
        return list(self._ent), list(self._rel), dict(st.cols), dict(st.core)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_write_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._write_lock = threading.RLock()

    # --- vocabulary ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        st = self._st
        dead = len(st.dead) if st.upto is None else int(np.count_nonzero(st.dead < st.upto))
        return st.n_total - dead

    @property
    def entities(self) -> Sequence[str]:
        return self._ent

    @property
    def relations(self) -> Sequence[str]:
        return self._rel

    @property
    def live(self) -> TemporalKG:
        return self

    def has_entity(self, name: str) -> bool:
        return name in self._ent_id

    def has_relation(self, name: str) -> bool:
        return name in self._rel_id

    @property
    def labels(self) -> Mapping[str, str]:
        return self._labels

    def label(self, name: str) -> str:
        return label_of(name, self._labels, self.display_underscores)

    def set_labels(self, labels: Mapping[str, str]) -> None:
        self._labels.update(labels)

    def entity_id(self, name: str) -> int:
        try:
            return self._ent_id[name]
        except KeyError:
            raise NotFoundError(f"entity {name!r} is not in KG {self.name!r}") from None

    def relation_id(self, name: str) -> int:
        try:
            return self._rel_id[name]
        except KeyError:
            raise NotFoundError(f"relation {name!r} is not in KG {self.name!r}") from None

    def _intern(self, table: list[str], ids: dict[str, int], name: str, cap: int, what: str) -> int:
        i = ids.get(name)
        if i is None:
            check_name(name, what)  # the one rule for names (tkgqa.kg.validate), on each new name
            i = len(table)
            if i >= cap:
                raise ConfigError(f"too many {what}s for the in-memory store (max {cap})")
            ids[name] = i
            table.append(name)
        return i

    # --- appends ------------------------------------------------------------------------------------
    def add(self, facts: Iterable[Fact]) -> int:
        """Append facts (duplicates skipped); they are visible to the next query. Appends are serialised;
        readers on other threads may run meanwhile (see the module docstring)."""
        with self._write_lock:
            return self._add(facts)

    def _add(self, facts: Iterable[Fact]) -> int:
        st = self._st
        added = 0
        for f in facts:
            s = self._intern(self._ent, self._ent_id, f.subject, MAX_ENTITIES, "entity")
            r = self._intern(self._rel, self._rel_id, f.relation, MAX_RELATIONS, "relation")
            o = self._intern(self._ent, self._ent_id, f.object, MAX_ENTITIES, "entity")
            t0 = f.start.first_day if f.start else NEG_INF
            t1 = f.end.last_day if f.end else POS_INF
            sig = (s, r, o, t0, t1)
            if sig in self._delta_seen or (st.n_main and st.holds(sig)):
                continue
            self._delta_seen.add(sig)
            g0 = int(f.start.granularity) if f.start else 0
            g1 = int(f.end.granularity) if f.end else 0
            self._fcache[st.n_main + len(st.delta)] = f  # the fact, then its row and index entries
            self._push(st, (s, r, o, t0, t1, g0, g1))
            added += 1
        if self._auto_compact and len(st.delta) > max(COMPACT_AFTER, st.n_main // 4):
            self.compact()
        return added

    @staticmethod
    def _push(st: State, row: Row) -> None:
        """Append one encoded row to the delta of ``st`` (row first, then its index entries)."""
        fid = st.n_main + len(st.delta)
        st.delta.append(row)
        s, r, o = row[0], row[1], row[2]
        for kind in INDEX_KINDS:
            st.delta_index[kind][index_key(kind, s, r, o)].append(fid)

    def append_rows(self, rows: Iterable[Row]) -> None:
        """Append encoded rows ``(s, r, o, t0, t1, g0, g1)`` as they are, without the duplicate check (the
        DuckDB store's rows, already checked there; names are in the vocabulary already)."""
        with self._write_lock:
            st = self._st
            for row in rows:
                self._push(st, tuple(int(v) for v in row))  # type: ignore[arg-type]

    def withdraw(self, ids: Iterable[int]) -> None:
        """Leave the facts with these ids out of every answer from now on (the DuckDB store's retractions)."""
        with self._write_lock:
            st = self._st
            dead = np.union1d(st.dead, np.asarray(list(ids), dtype=np.int64)).astype(np.int64)
            self._st = State(st.core, st.n_main, st.max_dur, st.ordered, st.delta, st.delta_index, dead)

    def restricted(self, upto: int | None, dead: IntArray) -> TemporalKG:
        """A read-only view of this store showing only the facts with ids below ``upto`` (``None``: any) that
        are not in ``dead`` (sorted ids) — the DuckDB store's transaction-time (``known_at``) views. It shares
        everything else (vocabulary, core, delta, fact cache); take a new one after the store changes."""
        view = copy.copy(self)
        st = self._st
        view._st = State(st.core, st.n_main, st.max_dur, st.ordered, st.delta, st.delta_index, dead, upto)
        view._auto_compact = False
        return view

    @property
    def n_delta(self) -> int:
        """How many rows were appended since the core was last built."""
        return len(self._st.delta)

    def compact(self) -> None:
        """Fold appended facts into the core and rebuild its permutations (fact ids do not change): a new
        state built aside and swapped in, so readers never see a half-compacted store."""
        with self._write_lock:
            st = self._st
            if not st.delta and st.n_main == len(st.cols["s"]) and "t_ids" in st.core:
                return
            cols: Mapping[str, AnyArray] = st.cols
            if st.delta:
                extra = np.asarray(st.delta, dtype=np.int64).reshape(-1, 7)
                cols = {c: np.concatenate([cols[c], extra[:, j]]) for j, c in enumerate(COLUMNS)}
            self._st = self._compacted(build_core(cols, len(self._ent), len(self._rel)), st.dead)
            self._delta_seen = set()

    def _compacted(
        self, core: dict[str, AnyArray], dead: IntArray = _EMPTY, bounds: tuple[int, bool] | None = None
    ) -> State:
        """A state whose main part is ``core`` and whose delta is empty."""
        cols = {c: core[f"col_{c}"] for c in COLUMNS}
        self._prime_points(cols)
        max_dur, ordered = bounds if bounds is not None else core_bounds(cols)
        return State(core, len(cols["s"]), max_dur, ordered, dead=dead)

    def _prime_points(self, cols: Mapping[str, AnyArray]) -> None:
        """Build the shared TimePoint of every distinct (day, granularity) now rather than on first use."""
        keys = []
        n = len(cols["s"])
        if n > 4 * _PRIME_MAX:  # large stores: built on first use (a pass over the columns costs more)
            return
        for day, gran in (("t0", "g0"), ("t1", "g1")):
            g = cols[gran].astype(np.int64)
            keys.append((cols[day].astype(np.int64) * 4 + g)[g > 0])
        distinct = np.unique(np.concatenate(keys)) if keys else _EMPTY
        if len(distinct) > _PRIME_MAX:
            return
        for key in distinct.tolist():
            if key not in self._tp_cache:
                self._point(key >> 2, key & 3)

    # --- queries ------------------------------------------------------------------------------------
    def _ids(
        self,
        subject: str | None,
        relation: str | None,
        object: str | None,
        time: TimeQuery,
        cutoff: int | None = None,
    ) -> IntArray:
        """Fact ids matching the pattern, in start-time order."""
        s = r = o = -1
        if subject is not None:
            s = self._ent_id.get(subject, -1)
            if s < 0:
                return _EMPTY
        if relation is not None:
            r = self._rel_id.get(relation, -1)
            if r < 0:
                return _EMPTY
        if object is not None:
            o = self._ent_id.get(object, -1)
            if o < 0:
                return _EMPTY
        lo_t, hi_t = query_window(time)
        if cutoff is not None:
            lo_t, hi_t = _clipped_window(lo_t, hi_t, cutoff)
        st = self._st  # one state for the whole search (see the module docstring)
        result = st.main_ids(s, r, o, lo_t, hi_t)
        if st.delta:
            if s >= 0:
                kind = "s" if r < 0 else ("sr" if o < 0 else "sro")
            elif r >= 0:
                kind = "r" if o < 0 else "ro"
            else:
                kind = "o" if o >= 0 else "t"
            key = index_key(kind, s, r, o)
            result = self._with_delta(st, result, kind, key, o if kind == "s" else -1, lo_t, hi_t)
        return st.visible(result)

    def _with_delta(
        self, st: State, result: IntArray, kind: str, key: int, o: int, lo_t: int, hi_t: int
    ) -> IntArray:
        n = st.n_main
        delta = st.delta
        extra = [
            i
            for i in st.delta_index[kind].get(key, ())
            if delta[i - n][3] <= hi_t and delta[i - n][4] >= lo_t and (o < 0 or delta[i - n][2] == o)
        ]
        if not extra:
            return result
        merged = np.concatenate([result, np.asarray(extra, dtype=np.int64)])
        return merged[np.argsort(self._column(st, "t0", merged), kind="stable")]

    def column(self, name: str, ids: IntArray) -> IntArray:
        """Values (int64) of encoded column ``name`` (one of ``s r o t0 t1 g0 g1``) for fact ids ``ids``."""
        return self._column(self._st, name, ids)

    @staticmethod
    def _column(st: State, name: str, ids: IntArray) -> IntArray:
        col = st.cols[name]
        if not st.delta or not len(ids) or int(ids.max()) < st.n_main:
            return col[ids].astype(np.int64)
        j = COLUMNS.index(name)
        n, delta = st.n_main, st.delta
        return np.asarray([int(col[i]) if i < n else delta[i - n][j] for i in ids.tolist()], dtype=np.int64)

    _col = column

    def _point(self, day: int, gran: int, is_end: bool = False) -> TimePoint | None:
        """The point of granularity ``gran`` (0 = open end) covering day ``day`` (shared objects)."""
        key = day * 4 + gran
        point = self._tp_cache.get(key)
        if point is None and gran:
            point = self._tp_cache[key] = TimePoint(*civil_from_days(day)).coarsen(Granularity(gran))
        return point

    def _fill(self, fids: list[int], into: dict[int, Fact] | None = None) -> None:
        """Build (in one batch) the facts among ``fids`` missing from the shared cache (or from ``into``)."""
        st = self._st
        cache, n = (self._fcache, st.n_main) if into is None else (into, st.n_main)
        missing = [i for i in dict.fromkeys(fids) if i not in cache]
        if into is None and self._fcache_max is not None and len(cache) + len(missing) > self._fcache_max:
            cache.clear()
            missing = list(dict.fromkeys(fids))
        main = [i for i in missing if i < n]
        rows: list[tuple[int, ...]] = []
        if len(main) > _SCALAR_FILL:
            at = np.asarray(main, dtype=np.int64)
            rows = list(zip(*(st.cols[c][at].tolist() for c in COLUMNS), strict=True))
        elif main:  # a few facts: scalar reads beat seven fancy-index gathers
            cols = [st.cols[c] for c in COLUMNS]
            rows = [tuple(int(col[i]) for col in cols) for i in main]
        rows += [st.delta[i - n] for i in missing if i >= n]
        ent, rel, tp, point = self._ent, self._rel, self._tp_cache, self._point
        for fid, (s, r, o, t0, t1, g0, g1) in zip(main + [i for i in missing if i >= n], rows, strict=True):
            p0 = tp.get(t0 * 4 + g0) if g0 else None
            p1 = tp.get(t1 * 4 + g1) if g1 else None
            cache[fid] = Fact(
                ent[s],
                rel[r],
                ent[o],
                p0 if p0 is not None or not g0 else point(t0, g0),
                p1 if p1 is not None or not g1 else point(t1, g1),
            )

    def materialize(self, batch: int = 65536) -> None:
        """Build every :class:`Fact` object now (about 1 µs/fact) so that no query pays for it later (the
        fact cache is then unbounded: about 100 bytes per fact)."""
        self._fcache_max = None
        for lo in range(0, len(self), batch):
            self._fill(list(range(lo, min(lo + batch, len(self)))))

    def fact(self, fid: int) -> Fact:
        """The fact with internal id ``fid``."""
        return self._build_list([int(fid)])[0]

    def facts_by_ids(self, ids: Iterable[int]) -> list[Fact]:
        id_list = ids.tolist() if isinstance(ids, np.ndarray) else [int(i) for i in ids]
        return self._build_list(id_list)

    def _build_list(self, id_list: list[int]) -> list[Fact]:
        """The facts with ids ``id_list``, in that order (built on first use)."""
        try:
            return list(map(self._fcache.__getitem__, id_list))
        except KeyError:
            self._fill(id_list)
        try:
            return list(map(self._fcache.__getitem__, id_list))
        except KeyError:  # more ids than the cache holds (or another thread cleared it): build them here
            return self._uncached(id_list)

    def _uncached(self, id_list: list[int]) -> list[Fact]:
        out = []
        for lo in range(0, len(id_list), 65536):
            part = id_list[lo : lo + 65536]
            built: dict[int, Fact] = {}
            self._fill(part, built)
            out += [built[i] for i in part]
        return out

    def _query_facts(self, query: FactQuery, cutoff: int | None = None) -> list[Fact]:
        ids = self._ids(query.subject, query.relation, query.object, query.time, cutoff)
        if query.limit is not None:
            ids = ids[: query.limit]
        return self._build_list(ids.tolist())

    def _build(self, ids: IntArray) -> list[Fact]:
        """The facts with ids ``ids``, in that order."""
        return self._build_list(ids.tolist())

    def _query_count(self, query: FactQuery, cutoff: int | None = None) -> int:
        return len(self._ids(query.subject, query.relation, query.object, query.time, cutoff))

    def __iter__(self) -> Iterator[Fact]:
        return self._iter_ids(self._all_ids())

    def _iter_ids(self, ids: IntArray, batch: int = 65536) -> Iterator[Fact]:
        for lo in range(0, len(ids), batch):
            yield from self._build(ids[lo : lo + batch])

    def as_of(self, cutoff: TimeArg) -> KGSnapshot:
        point = TimePoint.of(cutoff)
        return KGSnapshot(self, point)
