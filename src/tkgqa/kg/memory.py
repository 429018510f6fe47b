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
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, NotFoundError
from ..time import NEG_INF, POS_INF, Granularity, Interval, TimePoint, civil_from_days, parse_time, span_of
from .base import TimeQuery
from .fact import Fact, display_name

IntArray = npt.NDArray[np.int64]
INDEX_KINDS = ("s", "o", "r", "sr", "ro", "sro", "t")
_R_BITS, _E_BITS = 18, 22
_MAX_E, _MAX_R = 1 << _E_BITS, 1 << _R_BITS
_EMPTY = np.zeros(0, dtype=np.int64)


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


def _time_span(time: TimeQuery) -> tuple[int, int] | None:
    if time is None:
        return None
    if isinstance(time, str):
        time = Interval.parse(time)
    return span_of(time)


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
        self._labels: dict[str, str] = dict(labels or {})
        self._ent: list[str] = []
        self._ent_id: dict[str, int] = {}
        self._rel: list[str] = []
        self._rel_id: dict[str, int] = {}
        self._cols = {c: _EMPTY.copy() for c in ("s", "r", "o", "t0", "t1", "g0", "g1")}
        self._index: dict[str, _Index] = {}
        self._seen: set[tuple[int, int, int, int, int]] = set()
        self._reset_delta()
        self._tp_cache: dict[tuple[int, int, bool], TimePoint | None] = {}
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
        index: Mapping[str, tuple[IntArray, IntArray, IntArray]] | None = None,
    ) -> TemporalKG:
        """Build from encoded columns (``s r o t0 t1 g0 g1``), e.g. out of the binary cache."""
        kg = cls(labels=labels, name=name)
        kg._ent = list(entities)
        kg._ent_id = {e: i for i, e in enumerate(kg._ent)}
        kg._rel = list(relations)
        kg._rel_id = {r: i for i, r in enumerate(kg._rel)}
        kg._cols = {c: np.asarray(columns[c], dtype=np.int64) for c in kg._cols}
        kg._n_main = len(kg._cols["s"])
        if index is not None:
            kg._index = {k: _Index(*(np.asarray(a, dtype=np.int64) for a in v)) for k, v in index.items()}
        else:
            kg._build_index()
        kg._seen = set()  # dedup of appends is rebuilt lazily
        kg._seen_ready = False
        return kg

    def to_arrays(self) -> tuple[list[str], list[str], dict[str, IntArray], dict[str, tuple[IntArray, ...]]]:
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
            for kind in INDEX_KINDS:
                self._delta_index[kind][_key(kind, s, r, o)].append(fid)
            added += 1
        if len(self._delta) > max(50_000, self._n_main // 4):
            self.compact()
        return added

    def compact(self) -> None:
        """Fold appended facts into the numpy columns and rebuild the indexes."""
        if not self._delta and self._index:
            return
        if self._delta:
            extra = np.asarray(self._delta, dtype=np.int64).reshape(-1, 7)
            for j, c in enumerate(("s", "r", "o", "t0", "t1", "g0", "g1")):
                self._cols[c] = np.concatenate([self._cols[c], extra[:, j]])
        self._n_main = len(self._cols["s"])
        seen, ready = self._seen, self._seen_ready
        self._reset_delta()
        self._seen, self._seen_ready = seen, ready
        self._build_index()

    def _build_index(self) -> None:
        s, r, o, t0 = (self._cols[c] for c in ("s", "r", "o", "t0"))
        self._index = {}
        for kind in INDEX_KINDS:
            keys = _key(kind, s, r, o)
            if kind == "t":
                keys = np.zeros(len(s), dtype=np.int64)
            order = np.lexsort((t0, keys)).astype(np.int64)
            self._index[kind] = _Index(np.ascontiguousarray(keys[order]), order, np.ascontiguousarray(t0[order]))

    # --- queries ------------------------------------------------------------------------------------
    def _ids(
        self,
        subject: str | None,
        relation: str | None,
        object: str | None,
        time: TimeQuery,
        cutoff: int | None = None,
    ) -> IntArray:
        """Fact ids matching the pattern, in start-time order (main part, then appended ones)."""
        try:
            s = self._ent_id[subject] if subject is not None else -1
            r = self._rel_id[relation] if relation is not None else -1
            o = self._ent_id[object] if object is not None else -1
        except KeyError:
            return _EMPTY
        kind = {
            (1, 1, 1): "sro", (1, 1, 0): "sr", (0, 1, 1): "ro", (1, 0, 0): "s",
            (0, 0, 1): "o", (0, 1, 0): "r", (1, 0, 1): "s", (0, 0, 0): "t",
        }[(s >= 0, r >= 0, o >= 0)]  # fmt: skip
        key = _key(kind, s, r, o)
        span = _time_span(time)
        hi_t = POS_INF if span is None else span[1]
        if cutoff is not None:
            hi_t = min(hi_t, cutoff - 1)
        idx = self._index.get(kind)
        result = _EMPTY
        if idx is not None and len(idx.keys):
            lo = int(np.searchsorted(idx.keys, key, "left"))
            hi = int(np.searchsorted(idx.keys, key, "right"))
            if hi > lo and hi_t < POS_INF:
                hi = lo + int(np.searchsorted(idx.t0[lo:hi], hi_t, "right"))
            result = idx.ids[lo:hi]
        if self._delta:
            extra = [i for i in self._delta_index[kind].get(key, ()) if self._delta[i - self._n_main][3] <= hi_t]
            if extra:
                result = np.concatenate([result, np.asarray(extra, dtype=np.int64)])
        if len(result) and kind == "s" and o >= 0:
            result = result[self._col("o", result) == o]
        if len(result) and span is not None:
            result = result[self._col("t1", result) >= span[0]]
        return result

    def _col(self, name: str, ids: IntArray) -> IntArray:
        col = self._cols[name]
        if not self._delta or not len(ids) or int(ids.max()) < self._n_main:
            return col[ids]
        j = ("s", "r", "o", "t0", "t1", "g0", "g1").index(name)
        n = self._n_main
        return np.asarray(
            [int(col[i]) if i < n else self._delta[i - n][j] for i in ids.tolist()], dtype=np.int64
        )

    def _point(self, day: int, gran: int, is_end: bool) -> TimePoint | None:
        key = (day, gran, is_end)
        cached = self._tp_cache.get(key, False)
        if cached is not False:
            return cached  # type: ignore[return-value]
        point = None if gran == 0 else TimePoint(*civil_from_days(day)).coarsen(Granularity(gran))
        self._tp_cache[key] = point
        return point

    def fact(self, fid: int) -> Fact:
        """The fact with internal id ``fid``."""
        if fid < self._n_main:
            c = self._cols
            s, r, o, t0, t1, g0, g1 = (int(c[k][fid]) for k in ("s", "r", "o", "t0", "t1", "g0", "g1"))
        else:
            s, r, o, t0, t1, g0, g1 = self._delta[fid - self._n_main]
        return Fact(
            self._ent[s], self._rel[r], self._ent[o], self._point(t0, g0, False), self._point(t1, g1, True)
        )

    def facts_by_ids(self, ids: Iterable[int]) -> list[Fact]:
        return [self.fact(int(i)) for i in ids]

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
        return [self.fact(int(i)) for i in ids]

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
            last = self._point(int(t1[i]), int(g1[i]), True) if known1[i] else first
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
        ends = [f.end or f.start for f in facts if f.end or f.start]
        return (min(starts) if starts else None, max(ends, key=lambda p: p.last_day) if ends else None)
