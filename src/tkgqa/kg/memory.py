"""``TemporalKG``: the fast in-memory store.

Layout: dictionary-encoded ids in numpy columns (subject, relation, object, first day, last day,
granularities). Each index (``s``, ``o``, ``r``, ``sr``, ``ro``, ``sro``, ``t``) is a sort of the fact ids by
(key, first day), so a lookup is two binary searches for the key and two for the time window: a few
microseconds whatever the KG size. Appended facts go to a small delta (Python dicts) that every query also
reads; the delta is folded into the columns once it grows past a fraction of the store, so appends never
rebuild the index per call. ``as_of`` returns a view with a start-time cutoff applied inside each search.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, NotFoundError
from ..time import NEG_INF, POS_INF, Granularity, Interval, TimePoint, civil_from_days, parse_time, span_of
from .base import TimeQuery
from .fact import Fact, display_name

if TYPE_CHECKING:
    from .loaders import LoadReport

IntArray = npt.NDArray[np.int64]
INDEX_KINDS = ("s", "o", "r", "sr", "ro", "sro", "t")
COLUMNS = ("s", "r", "o", "t0", "t1", "g0", "g1")
_DENSE_KINDS = ("s", "o", "r")  # keys are entity/relation ids: offsets table instead of binary search
_R_BITS, _E_BITS = 18, 22
_MAX_E, _MAX_R = 1 << _E_BITS, 1 << _R_BITS
_EMPTY = np.zeros(0, dtype=np.int64)
_SPAN_CACHE_MAX = 4096
_SCALAR_FILL = 8  # batches up to this size read columns element-wise
_PRIME_MAX = (
    100_000  # precompute the TimePoints of a store with at most this many distinct (day, granularity)
)


def _key(kind: str, s: Any, r: Any, o: Any) -> Any:
    """Integer key of an index; works on ints and on int64 arrays."""
    if kind == "s":
        return s
    if kind == "o":
        return o
    if kind == "r":
        return r
    if kind == "sr":
        return (s << _R_BITS) | r
    if kind == "ro":
        return (r << _E_BITS) | o
    if kind == "sro":
        return (((s << _R_BITS) | r) << _E_BITS) | o
    return 0  # "t": one key, everything sorted by time


@dataclass(frozen=True)
class _Index:
    keys: IntArray  # sorted
    ids: IntArray  # fact ids in (key, first day) order
    t0: IntArray  # first day of each fact in ``ids`` order
    offsets: list[int] | None = None  # dense kinds: ids[offsets[k]:offsets[k + 1]] are the facts of key k
    offsets_array: IntArray | None = None  # the same offsets as an array (vectorised gathers)


class TemporalKG:
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
        self._cols = {c: _EMPTY.copy() for c in COLUMNS}
        self._index: dict[str, _Index] = {}
        self._seen: set[tuple[int, int, int, int, int]] = set()
        self._reset_delta()
        self._tp_cache: dict[int, TimePoint] = {}  # day * 4 + granularity → shared TimePoint
        self._span_cache: dict[str, tuple[int, int]] = {}
        self._fcache: list[Fact | None] = []  # Fact objects built so far, by fact id
        self._n_built = 0  # how many entries of _fcache are set
        self._max_dur = 0  # largest ``t1 - t0`` of the main part: bounds the time-window search
        self._ordered = True
        self._n_main = 0
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
        kg._cols = {c: np.ascontiguousarray(columns[c], dtype=np.int64) for c in COLUMNS}
        kg._n_main = len(kg._cols["s"])
        kg._fcache = [None] * kg._n_main
        kg._n_built = 0
        orders: dict[str, IntArray | tuple[IntArray, IntArray, IntArray]] = {}
        for kind, value in (index or {}).items():
            if isinstance(value, tuple):
                keys, ids, starts = (np.ascontiguousarray(a, dtype=np.int64) for a in value)
                orders[kind] = (keys, ids, starts)
            else:
                orders[kind] = np.asarray(value, dtype=np.int64)
        kg._build_index(orders)
        kg._seen = set()  # dedup of appends is rebuilt lazily
        kg._seen_ready = False
        return kg

    def to_arrays(
        self,
    ) -> tuple[list[str], list[str], dict[str, IntArray], dict[str, tuple[IntArray, IntArray, IntArray]]]:
        """Entities, relations, encoded columns and ``{kind: (keys, ids, t0)}`` indexes (after compaction)."""
        self.compact()
        index = {k: (v.keys, v.ids, v.t0) for k, v in self._index.items()}
        return list(self._ent), list(self._rel), dict(self._cols), index

    def _reset_delta(self) -> None:
        self._delta: list[tuple[int, int, int, int, int, int, int]] = []
        self._delta_index: dict[str, dict[int, list[int]]] = {k: defaultdict(list) for k in INDEX_KINDS}
        self._seen_ready = True

    # --- vocabulary ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n_main + len(self._delta)

    @property
    def entities(self) -> Sequence[str]:
        return self._ent

    @property
    def relations(self) -> Sequence[str]:
        return self._rel

    def has_entity(self, name: str) -> bool:
        return name in self._ent_id

    def has_relation(self, name: str) -> bool:
        return name in self._rel_id

    @property
    def labels(self) -> Mapping[str, str]:
        return self._labels

    def label(self, name: str) -> str:
        found = self._labels.get(name)
        if found is not None:
            return found
        return display_name(name) if self.display_underscores else name

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
            i = len(table)
            if i >= cap:
                raise ConfigError(f"too many {what}s for the in-memory store (max {cap})")
            ids[name] = i
            table.append(name)
        return i

    # --- appends ------------------------------------------------------------------------------------
    def add(self, facts: Iterable[Fact]) -> int:
        """Append facts (duplicates skipped); they are visible to the next query."""
        if not self._seen_ready:
            self._seen = set(zip(*(self._cols[c].tolist() for c in ("s", "r", "o", "t0", "t1")), strict=True))
            self._seen_ready = True
        added = 0
        for f in facts:
            s = self._intern(self._ent, self._ent_id, f.subject, _MAX_E, "entity")
            r = self._intern(self._rel, self._rel_id, f.relation, _MAX_R, "relation")
            o = self._intern(self._ent, self._ent_id, f.object, _MAX_E, "entity")
            t0 = f.start.first_day if f.start else NEG_INF
            t1 = f.end.last_day if f.end else POS_INF
            sig = (s, r, o, t0, t1)
            if sig in self._seen:
                continue
            self._seen.add(sig)
            g0 = int(f.start.granularity) if f.start else 0
            g1 = int(f.end.granularity) if f.end else 0
            fid = len(self)
            self._delta.append((s, r, o, t0, t1, g0, g1))
            self._fcache.append(f)
            self._n_built += 1
            for kind in INDEX_KINDS:
                self._delta_index[kind][_key(kind, s, r, o)].append(fid)
            added += 1
        if len(self._delta) > max(50_000, self._n_main // 4):
            self.compact()
        return added

    def compact(self) -> None:
        """Fold appended facts into the numpy columns and rebuild the indexes (fact ids do not change)."""
        if not self._delta and self._index:
            return
        if self._delta:
            extra = np.asarray(self._delta, dtype=np.int64).reshape(-1, 7)
            for j, c in enumerate(COLUMNS):
                self._cols[c] = np.concatenate([self._cols[c], extra[:, j]])
        self._n_main = len(self._cols["s"])
        seen, ready = self._seen, self._seen_ready
        self._reset_delta()
        self._seen, self._seen_ready = seen, ready
        self._build_index()

    def _build_index(
        self, orders: Mapping[str, IntArray | tuple[IntArray, IntArray, IntArray]] | None = None
    ) -> None:
        """(Re)build every index; ``orders`` gives known sort orders (from the cache) to skip sorting, or
        whole ``(sorted keys, order, sorted starts)`` triples to skip the gathers too."""
        t0, t1 = self._cols["t0"], self._cols["t1"]
        n = len(t0)
        self._index = {}
        for kind in INDEX_KINDS:
            sorted_keys, order, starts = self._sorted(kind, (orders or {}).get(kind))
            offsets = None
            if kind in _DENSE_KINDS:
                size = len(self._rel) if kind == "r" else len(self._ent)
                offsets = sorted_keys.searchsorted(np.arange(size + 1, dtype=np.int64))
            self._index[kind] = _Index(
                sorted_keys,
                order,
                starts,
                None if offsets is None else offsets.tolist(),
                offsets,
            )
        self._prime_points()
        # A fact overlapping a window [a, b] starts at or after ``a - max_dur``; a negative duration
        # (start after end) or an open end makes the bound useless, hence the fallback to "unbounded".
        durations = t1 - t0
        self._max_dur = int(durations.max()) if n else 0
        self._ordered = not n or int(durations.min()) >= 0  # False if some fact ends before it starts

    def _sorted(
        self, kind: str, known: IntArray | tuple[IntArray, IntArray, IntArray] | None
    ) -> tuple[IntArray, IntArray, IntArray]:
        """``(sorted keys, order, sorted starts)`` of index ``kind``: taken as given when ``known`` is a whole
        triple of the right length, gathered along a known order, or sorted from scratch."""
        s, r, o, t0 = (self._cols[c] for c in ("s", "r", "o", "t0"))
        n = len(s)
        if isinstance(known, tuple):
            if all(len(a) == n for a in known):
                return known
            known = known[1]
        if known is None or len(known) != n:
            keys = np.zeros(n, dtype=np.int64) if kind == "t" else _key(kind, s, r, o)
            order = np.lexsort((t0, keys)).astype(np.int64)
            return np.ascontiguousarray(keys[order]), order, np.ascontiguousarray(t0[order])
        order = known
        sorted_keys = np.zeros(n, dtype=np.int64) if kind == "t" else _key(kind, s[order], r[order], o[order])
        return sorted_keys, order, np.ascontiguousarray(t0[order])

    def _prime_points(self) -> None:
        """Build the shared TimePoint of every distinct (day, granularity) now rather than on first use."""
        keys = []
        for day, gran in (("t0", "g0"), ("t1", "g1")):
            g = self._cols[gran]
            keys.append((self._cols[day] * 4 + g)[g > 0])
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
        key = _key(kind, s, r, o)
        lo_t, hi_t = (NEG_INF, POS_INF) if time is None else self._span(time)
        if cutoff is not None and cutoff - 1 < hi_t:
            hi_t = cutoff - 1
        result = self._main_ids(self._index[kind], key, lo_t, hi_t)
        if len(result) and kind == "s" and o >= 0:
            result = result[self._cols["o"][result] == o]
        if self._delta:
            result = self._with_delta(result, kind, key, o if kind == "s" else -1, lo_t, hi_t)
        return result

    def _main_ids(self, idx: _Index, key: int, lo_t: int, hi_t: int) -> IntArray:
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
        sure = min(hi, lo + int(t0.searchsorted(lo_t))) if self._ordered else hi  # these start in the window
        maybe = lo if lo_t - self._max_dur <= NEG_INF else lo + int(t0.searchsorted(lo_t - self._max_dur))
        if maybe >= sure:
            return ids[sure:hi]
        early = ids[maybe:sure]
        early = early[self._cols["t1"][early] >= lo_t]  # started earlier, still running at the window
        return np.concatenate([early, ids[sure:hi]]) if len(early) else ids[sure:hi]

    def _with_delta(self, result: IntArray, kind: str, key: int, o: int, lo_t: int, hi_t: int) -> IntArray:
        n = self._n_main
        delta = self._delta
        extra = [
            i
            for i in self._delta_index[kind].get(key, ())
            if delta[i - n][3] <= hi_t and delta[i - n][4] >= lo_t and (o < 0 or delta[i - n][2] == o)
        ]
        if not extra:
            return result
        merged = np.concatenate([result, np.asarray(extra, dtype=np.int64)])
        return merged[np.argsort(self.column("t0", merged), kind="stable")]

    def column(self, name: str, ids: IntArray) -> IntArray:
        """Values of encoded column ``name`` (one of ``s r o t0 t1 g0 g1``) for fact ids ``ids``."""
        col = self._cols[name]
        if not self._delta or not len(ids) or int(ids.max()) < self._n_main:
            return col[ids]
        j = COLUMNS.index(name)
        n = self._n_main
        return np.asarray(
            [int(col[i]) if i < n else self._delta[i - n][j] for i in ids.tolist()], dtype=np.int64
        )

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
        cache, n = self._fcache, self._n_main
        missing = [i for i in fids if cache[i] is None]
        self._n_built += len(missing)
        main = [i for i in missing if i < n]
        rows: list[tuple[int, ...]] = []
        if len(main) > _SCALAR_FILL:
            at = np.asarray(main, dtype=np.int64)
            rows = list(zip(*(self._cols[c][at].tolist() for c in COLUMNS), strict=True))
        elif main:  # a few facts: scalar reads beat seven fancy-index gathers
            cols = [self._cols[c] for c in COLUMNS]
            rows = [tuple(int(col[i]) for col in cols) for i in main]
        rows += [self._delta[i - n] for i in missing if i >= n]
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

    def fact(self, fid: int) -> Fact:
        """The fact with internal id ``fid``."""
        return self._fcache[fid] or self._fill([fid], fid)

    def facts_by_ids(self, ids: Iterable[int]) -> list[Fact]:
        id_list = ids.tolist() if isinstance(ids, np.ndarray) else [int(i) for i in ids]
        cache, fill = self._fcache, self._fill
        return [cache[i] or fill(id_list, i) for i in id_list]

    def facts(
        self,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        time: TimeQuery = None,
        *,
        limit: int | None = None,
        cutoff: int | None = None,
    ) -> list[Fact]:
        ids = self._ids(subject, relation, object, time, cutoff)
        if limit is not None:
            ids = ids[:limit]
        id_list = ids.tolist()
        cache = self._fcache
        if self._n_built == len(cache):  # all built (e.g. after materialize): no per-item check
            return cast(list[Fact], list(map(cache.__getitem__, id_list)))
        fill = self._fill
        return [cache[i] or fill(id_list, i) for i in id_list]

    def count(
        self,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        time: TimeQuery = None,
        *,
        cutoff: int | None = None,
    ) -> int:
        return len(self._ids(subject, relation, object, time, cutoff))

    def incident_ids(
        self, entity_ids: IntArray, *, span: tuple[int, int] | None = None, cutoff: int | None = None
    ) -> IntArray:
        """Ids of the facts with subject or object in ``entity_ids`` (sorted, unique), optionally only
        those meeting the day ``span`` and starting before day ``cutoff``. Vectorised: one call per hop."""
        ents = np.unique(np.asarray(entity_ids, dtype=np.int64))
        parts = []
        for kind in ("s", "o"):
            offsets = self._index[kind].offsets_array
            assert offsets is not None
            known = ents[ents + 1 < len(offsets)]
            starts, ends = offsets[known], offsets[known + 1]
            lengths = ends - starts
            total = int(lengths.sum())
            if total:
                shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
                parts.append(self._index[kind].ids[np.arange(total, dtype=np.int64) + shift])
        if self._delta:
            wanted = set(ents.tolist())
            n = self._n_main
            parts.append(
                np.asarray(
                    [n + j for j, d in enumerate(self._delta) if d[0] in wanted or d[2] in wanted],
                    dtype=np.int64,
                )
            )
        ids = np.unique(np.concatenate(parts)) if parts else _EMPTY
        if len(ids) and (span is not None or cutoff is not None):
            lo_t, hi_t = span if span is not None else (NEG_INF, POS_INF)
            if cutoff is not None:
                hi_t = min(hi_t, cutoff - 1)
            ids = ids[(self.column("t0", ids) <= hi_t) & (self.column("t1", ids) >= lo_t)]
        return ids

    def __iter__(self) -> Iterator[Fact]:
        for i in range(len(self)):
            yield self.fact(i)

    def as_of(self, cutoff: TimePoint | str) -> KGSnapshot:
        point = parse_time(cutoff) if isinstance(cutoff, str) else cutoff
        return KGSnapshot(self, point)

    def time_span(self) -> tuple[TimePoint | None, TimePoint | None]:
        if not len(self):
            return (None, None)
        ids = np.arange(len(self), dtype=np.int64)
        t0, g0 = self._col("t0", ids), self._col("g0", ids)
        t1, g1 = self._col("t1", ids), self._col("g1", ids)
        known0, known1 = g0 > 0, g1 > 0
        first = last = None
        if known0.any():
            i = int(np.argmin(np.where(known0, t0, POS_INF)))
            first = self._point(int(t0[i]), int(g0[i]), False)
        if known1.any() or known0.any():
            ends = np.where(known1, t1, np.where(known0, t0, NEG_INF))
            i = int(np.argmax(ends))
            if known1[i]:
                last = self._point(int(t1[i]), int(g1[i]), True)
            else:
                last = self._point(int(t0[i]), int(g0[i]), False)
        return (first, last)

    def relation_counts(self) -> dict[str, int]:
        ids = np.arange(len(self), dtype=np.int64)
        counts = np.bincount(self._col("r", ids), minlength=len(self._rel))
        return {self._rel[i]: int(n) for i, n in enumerate(counts) if n}


class KGSnapshot:
    """Read-only view of a :class:`TemporalKG` holding only facts that start before ``cutoff``.

    The view reads the live store, so facts appended to it later (and starting before the cutoff) appear.
    """

    def __init__(self, base: TemporalKG, cutoff: TimePoint) -> None:
        self.base = base
        self.cutoff = cutoff
        self.name = f"{base.name}<{cutoff}"
        self._cut = cutoff.first_day

    def __len__(self) -> int:
        return self.base.count(cutoff=self._cut)

    @property
    def entities(self) -> Sequence[str]:
        return self.base.entities

    @property
    def relations(self) -> Sequence[str]:
        return self.base.relations

    def has_entity(self, name: str) -> bool:
        return self.base.has_entity(name)

    def has_relation(self, name: str) -> bool:
        return self.base.has_relation(name)

    def label(self, name: str) -> str:
        return self.base.label(name)

    def facts(
        self,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        time: TimeQuery = None,
        *,
        limit: int | None = None,
    ) -> list[Fact]:
        return self.base.facts(subject, relation, object, time, limit=limit, cutoff=self._cut)

    def count(
        self,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        time: TimeQuery = None,
    ) -> int:
        return self.base.count(subject, relation, object, time, cutoff=self._cut)

    def add(self, facts: Iterable[Fact]) -> int:
        raise ConfigError("a snapshot is read-only; add facts to the live store it was taken from")

    def as_of(self, cutoff: TimePoint | str) -> KGSnapshot:
        point = parse_time(cutoff) if isinstance(cutoff, str) else cutoff
        return KGSnapshot(self.base, min(point, self.cutoff))

    def time_span(self) -> tuple[TimePoint | None, TimePoint | None]:
        facts = self.facts()
        if not facts:
            return (None, None)
        starts = [f.start for f in facts if f.start]
        ends = [p for f in facts if (p := f.end or f.start) is not None]
        return (min(starts) if starts else None, max(ends, key=lambda p: p.last_day) if ends else None)
