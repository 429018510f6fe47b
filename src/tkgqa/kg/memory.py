"""``TemporalKG``: the fast in-memory store.

Layout (:mod:`tkgqa.kg.index`): dictionary-encoded ids in numpy columns (subject, relation, object, first day,
last day, granularities). Each index (``s``, ``o``, ``r``, ``sr``, ``ro``, ``sro``, ``t``) is a sort of the
fact ids by (key, first day), so a lookup is two binary searches for the key and two for the time window: a
few microseconds whatever the KG size. Appended facts go to a small delta (Python dicts) that every query also
reads; the delta is folded into the columns once it grows past a fraction of the store, so appends never
rebuild the index per call. ``as_of`` returns a view (:class:`~tkgqa.kg.snapshot.KGSnapshot`) with a
start-time cutoff applied inside each search and its facts clipped at the cutoff (an end on or after the
cutoff's first day reads as open; :func:`~tkgqa.kg.memory_walks._clipped_window` turns that into the index
search). The :class:`~tkgqa.kg.base.KGStore` methods that neighbourhood walks need (``incident``, ``hop``,
``relation_counts``, ``time_span``) run on these indexes, vectorised (:mod:`tkgqa.kg.memory_walks`).

**Threads: one writer, many readers.** Appends (and the compaction they trigger) are serialised by a writer
lock; readers take no lock. Everything a query reads of the columns, indexes and delta is one
:class:`State` object, read once per call; compaction builds a new one and swaps it in (copy-on-write), so a
reader sees either the state before or after it, never a mix (an ``IndexError``, or fewer facts than a read
before it). Fact ids never change, so ids from one state are valid in every later one. Within a state, an
append writes the fact, then its row, then its index entries: a concurrent reader sees it fully or not at all.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, NotFoundError
from ..time import NEG_INF, POS_INF, Granularity, Interval, TimePoint, civil_from_days, span_of
from .base import FactQuery, StoreBase, TimeArg, TimeQuery
from .fact import Fact, label_of
from .index import (
    COLUMNS,
    INDEX_KINDS,
    MAX_ENTITIES,
    MAX_RELATIONS,
    Index,
    IntArray,
    KnownOrder,
    State,
    build_indexes,
    empty_state,
    index_key,
)
from .memory_walks import _EMPTY, WalkMixin, _clipped_window
from .snapshot import KGSnapshot
from .validate import check_name

if TYPE_CHECKING:
    from .loaders import LoadReport

_SPAN_CACHE_MAX = 4096
_SCALAR_FILL = 8  # batches up to this size read columns element-wise
_PRIME_MAX = 100_000  # precompute the TimePoints of a store with at most this many (day, granularity) pairs


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
        self._seen: set[tuple[int, int, int, int, int]] = set()
        self._seen_ready = True
        self._tp_cache: dict[int, TimePoint] = {}  # day * 4 + granularity → shared TimePoint
        self._span_cache: dict[str, tuple[int, int]] = {}
        self._fcache: list[Fact | None] = []  # Fact objects built so far, by fact id
        self._all_built = True  # every entry of _fcache is set (after materialize, or only appends)
        self._rank: IntArray | None = None  # entity id → position in name order (ties of ``hop``)
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
        index: Mapping[str, tuple[IntArray, IntArray, IntArray] | IntArray] | None = None,
    ) -> TemporalKG:
        """Build from encoded columns (``s r o t0 t1 g0 g1``), e.g. out of the binary cache.

        ``index`` maps an index kind to its ``(keys, ids, t0)`` arrays, or to just its ``ids`` order (keys and
        first days are then gathered from the columns); missing kinds are rebuilt by sorting."""
        kg = cls(labels=labels, name=name)
        kg._ent = list(entities)
        kg._ent_id = {e: i for i, e in enumerate(kg._ent)}
        kg._rel = list(relations)
        kg._rel_id = {r: i for i, r in enumerate(kg._rel)}
        cols = {c: np.ascontiguousarray(columns[c], dtype=np.int64) for c in COLUMNS}
        kg._fcache = [None] * len(cols["s"])
        kg._all_built = not kg._fcache
        orders: dict[str, IntArray | tuple[IntArray, IntArray, IntArray]] = {}
        for kind, value in (index or {}).items():
            if isinstance(value, tuple):
                keys, ids, starts = (np.ascontiguousarray(a, dtype=np.int64) for a in value)
                orders[kind] = (keys, ids, starts)
            else:
                orders[kind] = np.asarray(value, dtype=np.int64)
        kg._st = kg._compacted(cols, orders)
        kg._seen = set()  # dedup of appends is rebuilt lazily
        kg._seen_ready = False
        return kg

    def to_arrays(
        self,
    ) -> tuple[list[str], list[str], dict[str, IntArray], dict[str, tuple[IntArray, IntArray, IntArray]]]:
        """Entities, relations, encoded columns and ``{kind: (keys, ids, t0)}`` indexes (after compaction)."""
        self.compact()
        st = self._st
        index = {k: (v.keys, v.ids, v.t0) for k, v in st.index.items()}
        return list(self._ent), list(self._rel), dict(st.cols), index

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
        return st.n_main + len(st.delta)

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
        if not self._seen_ready:
            self._seen = set(zip(*(st.cols[c].tolist() for c in ("s", "r", "o", "t0", "t1")), strict=True))
            self._seen_ready = True
        added = 0
        for f in facts:
            s = self._intern(self._ent, self._ent_id, f.subject, MAX_ENTITIES, "entity")
            r = self._intern(self._rel, self._rel_id, f.relation, MAX_RELATIONS, "relation")
            o = self._intern(self._ent, self._ent_id, f.object, MAX_ENTITIES, "entity")
            t0 = f.start.first_day if f.start else NEG_INF
            t1 = f.end.last_day if f.end else POS_INF
            sig = (s, r, o, t0, t1)
            if sig in self._seen:
                continue
            self._seen.add(sig)
            g0 = int(f.start.granularity) if f.start else 0
            g1 = int(f.end.granularity) if f.end else 0
            fid = st.n_main + len(st.delta)
            self._fcache.append(f)  # the fact, then its row, then its index entries (readers never lock)
            st.delta.append((s, r, o, t0, t1, g0, g1))
            for kind in INDEX_KINDS:
                st.delta_index[kind][index_key(kind, s, r, o)].append(fid)
            added += 1
        if len(st.delta) > max(50_000, st.n_main // 4):
            self.compact()
        return added

    def compact(self) -> None:
        """Fold appended facts into the numpy columns and rebuild the indexes (fact ids do not change): a
        new state built aside and swapped in, so readers never see a half-compacted store."""
        with self._write_lock:
            st = self._st
            if not st.delta and st.index:
                return
            cols = st.cols
            if st.delta:
                extra = np.asarray(st.delta, dtype=np.int64).reshape(-1, 7)
                cols = {c: np.concatenate([cols[c], extra[:, j]]) for j, c in enumerate(COLUMNS)}
            self._st = self._compacted(cols)

    def _compacted(self, cols: dict[str, IntArray], orders: Mapping[str, KnownOrder] | None = None) -> State:
        """A state whose main part is ``cols`` (indexes rebuilt; see :func:`~tkgqa.kg.index.build_indexes`
        for ``orders``) and whose delta is empty."""
        index = build_indexes(cols, len(self._ent), len(self._rel), orders)
        self._prime_points(cols)
        # A fact overlapping a window [a, b] starts at or after ``a - max_dur``; a negative duration
        # (start after end) or an open end makes the bound useless, hence the fallback to "unbounded".
        durations = cols["t1"] - cols["t0"]
        n = len(durations)
        max_dur = int(durations.max()) if n else 0
        ordered = not n or int(durations.min()) >= 0
        return State(cols, index, n, max_dur, ordered)

    def _prime_points(self, cols: Mapping[str, IntArray]) -> None:
        """Build the shared TimePoint of every distinct (day, granularity) now rather than on first use."""
        keys = []
        for day, gran in (("t0", "g0"), ("t1", "g1")):
            g = cols[gran]
            keys.append((cols[day] * 4 + g)[g > 0])
        distinct = np.unique(np.concatenate(keys)) if keys else _EMPTY
        if len(distinct) > _PRIME_MAX:
            return
        for key in distinct.tolist():
            if key not in self._tp_cache:
                self._point(key >> 2, key & 3)

    # --- queries ------------------------------------------------------------------------------------
    def _span(self, time: TimePoint | Interval | str) -> tuple[int, int]:
        if isinstance(time, TimePoint):
            return (time.first_day, time.last_day)
        if isinstance(time, str):
            span = self._span_cache.get(time)
            if span is None:
                span = span_of(Interval.parse(time))
                if len(self._span_cache) >= _SPAN_CACHE_MAX:
                    self._span_cache.clear()
                self._span_cache[time] = span
            return span
        return time.span

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
        if s >= 0:
            kind = "s" if r < 0 else ("sr" if o < 0 else "sro")
        elif r >= 0:
            kind = "r" if o < 0 else "ro"
        else:
            kind = "o" if o >= 0 else "t"
        key = index_key(kind, s, r, o)
        lo_t, hi_t = (NEG_INF, POS_INF) if time is None else self._span(time)
        if cutoff is not None:
            lo_t, hi_t = _clipped_window(lo_t, hi_t, cutoff)
        st = self._st  # one state for the whole search (see the module docstring)
        result = self._main_ids(st, st.index[kind], key, lo_t, hi_t)
        if len(result) and kind == "s" and o >= 0:
            result = result[st.cols["o"][result] == o]
        if st.delta:
            result = self._with_delta(st, result, kind, key, o if kind == "s" else -1, lo_t, hi_t)
        return result

    @staticmethod
    def _main_ids(st: State, idx: Index, key: int, lo_t: int, hi_t: int) -> IntArray:
        """Ids of the main (compacted) part with ``key`` whose span meets ``[lo_t, hi_t]``."""
        if idx.offsets is not None:
            if key + 1 >= len(idx.offsets):
                return _EMPTY
            lo, hi = idx.offsets[key], idx.offsets[key + 1]
        else:
            lo = int(idx.keys.searchsorted(key))
            hi = int(idx.keys.searchsorted(key, "right"))
        ids = idx.ids
        if lo >= hi or (hi_t >= POS_INF and lo_t <= NEG_INF):
            return ids[lo:hi]
        t0 = idx.t0[lo:hi]
        if hi_t < POS_INF:
            hi = lo + int(t0.searchsorted(hi_t, "right"))  # starts no later than the window's end
        if lo_t <= NEG_INF or lo >= hi:
            return ids[lo:hi]
        sure = min(hi, lo + int(t0.searchsorted(lo_t))) if st.ordered else hi  # these start in the window
        maybe = lo if lo_t - st.max_dur <= NEG_INF else lo + int(t0.searchsorted(lo_t - st.max_dur))
        if maybe >= sure:
            return ids[sure:hi]
        early = ids[maybe:sure]
        early = early[st.cols["t1"][early] >= lo_t]  # started earlier, still running at the window
        return np.concatenate([early, ids[sure:hi]]) if len(early) else ids[sure:hi]

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
        """Values of encoded column ``name`` (one of ``s r o t0 t1 g0 g1``) for fact ids ``ids``."""
        return self._column(self._st, name, ids)

    @staticmethod
    def _column(st: State, name: str, ids: IntArray) -> IntArray:
        col = st.cols[name]
        if not st.delta or not len(ids) or int(ids.max()) < st.n_main:
            return col[ids]
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

    def _fill(self, fids: list[int], wanted: int) -> Fact:
        """Build (in one batch) the uncached facts among ``fids``; return fact ``wanted``."""
        st = self._st
        cache, n = self._fcache, st.n_main
        missing = [i for i in fids if cache[i] is None]
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
        found = cache[wanted]
        if found is None:
            raise IndexError(f"fact id {wanted} not among the ids to build")
        return found

    def materialize(self, batch: int = 65536) -> None:
        """Build every :class:`Fact` object now (about 1 µs/fact) so that no query pays for it later."""
        for lo in range(0, len(self), batch):
            ids = list(range(lo, min(lo + batch, len(self))))
            self._fill(ids, ids[0])
        self._all_built = True  # facts appended meanwhile were built when added

    def fact(self, fid: int) -> Fact:
        """The fact with internal id ``fid``."""
        return self._fcache[fid] or self._fill([fid], fid)

    def facts_by_ids(self, ids: Iterable[int]) -> list[Fact]:
        id_list = ids.tolist() if isinstance(ids, np.ndarray) else [int(i) for i in ids]
        cache, fill = self._fcache, self._fill
        return [cache[i] or fill(id_list, i) for i in id_list]

    def _query_facts(self, query: FactQuery, cutoff: int | None = None) -> list[Fact]:
        ids = self._ids(query.subject, query.relation, query.object, query.time, cutoff)
        if query.limit is not None:
            ids = ids[: query.limit]
        id_list = ids.tolist()  # the body of _build, inlined: this is the hot path of every lookup
        cache = self._fcache
        if self._all_built:
            return cast(list[Fact], list(map(cache.__getitem__, id_list)))
        fill = self._fill
        return [cache[i] or fill(id_list, i) for i in id_list]

    def _build(self, ids: IntArray) -> list[Fact]:
        """The facts with ids ``ids``, in that order."""
        id_list = ids.tolist()
        cache = self._fcache
        if self._all_built:  # all built (e.g. after materialize): no per-item check
            return cast(list[Fact], list(map(cache.__getitem__, id_list)))
        fill = self._fill
        return [cache[i] or fill(id_list, i) for i in id_list]

    def _query_count(self, query: FactQuery, cutoff: int | None = None) -> int:
        return len(self._ids(query.subject, query.relation, query.object, query.time, cutoff))

    def __iter__(self) -> Iterator[Fact]:
        return self._iter_ids(np.arange(len(self), dtype=np.int64))

    def _iter_ids(self, ids: IntArray, batch: int = 65536) -> Iterator[Fact]:
        for lo in range(0, len(ids), batch):
            yield from self._build(ids[lo : lo + batch])

    def as_of(self, cutoff: TimeArg) -> KGSnapshot:
        point = TimePoint.of(cutoff)
        return KGSnapshot(self, point)
