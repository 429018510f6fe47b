"""The :class:`~tkgqa.kg.base.KGStore` methods that neighbourhood walks need (``incident``, ``hop``,
``relation_counts``, ``time_span``), run on :class:`~tkgqa.kg.memory.TemporalKG`'s core, vectorised: a
few numpy operations per call. A mixin of ``TemporalKG`` (its state, columns and searches are declared
here for the type checker only); the threading rule of :mod:`tkgqa.kg.memory` holds: one state per call."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, cast

import numpy as np

from ..time import NEG_INF, POS_INF, TimePoint
from .base import Hop, HopQuery, TimeQuery, entity_names, query_window
from .fact import Fact
from .index import IntArray, State

_EMPTY = np.zeros(0, dtype=np.int64)


def _clipped_window(lo_t: int, hi_t: int, cutoff: int) -> tuple[int, int]:
    """The day window ``[lo_t, hi_t]`` as searched in the columns of an ``as_of`` view starting on day
    ``cutoff``: a fact must start before the cutoff, and one whose stored end reaches the cutoff is open
    there (clipped), so it meets every window from its start on — ``t1 >= min(lo_t, cutoff)``."""
    return min(lo_t, cutoff), min(hi_t, cutoff - 1)


class WalkMixin:
    """``incident``, ``hop``, ``relation_counts``, ``time_span`` of :class:`~tkgqa.kg.memory.TemporalKG`."""

    if TYPE_CHECKING:  # provided by TemporalKG
        _st: State
        _ent: list[str]
        _rel: list[str]
        _ent_id: dict[str, int]
        _rank: list[IntArray | None]
        __len__: Callable[[], int]
        column: Callable[[str, IntArray], IntArray]
        _ids: Callable[..., IntArray]  # (subject, relation, object, time, cutoff)
        _build: Callable[[IntArray], list[Fact]]
        _point: Callable[..., TimePoint | None]  # (day, granularity)

    def incident_ids(
        self,
        entity_ids: IntArray,
        *,
        span: tuple[int, int] | None = None,
        cutoff: int | None = None,
        ordered: bool = True,
    ) -> IntArray:
        """Ids of the facts with subject or object in ``entity_ids`` (unique; sorted unless ``ordered`` is
        false), optionally only those meeting the day ``span`` and starting before day ``cutoff``.
        Vectorised: one call per hop."""
        ents = np.unique(np.asarray(entity_ids, dtype=np.int64))
        st = self._st  # one state for the whole search (see the module docstring)
        parts = st.incident_main(ents)
        if st.delta:  # through the delta's own index: a few dict lookups per entity
            wanted = set(ents.tolist())
            by_s, by_o, n, delta = st.delta_index["s"], st.delta_index["o"], st.n_main, st.delta
            extra = [i for e in wanted for i in by_s.get(e, ())]
            extra += [i for e in wanted for i in by_o.get(e, ()) if delta[i - n][0] not in wanted]
            parts.append(np.asarray(extra, dtype=np.int64))
        ids = st.visible(np.concatenate(parts) if parts else _EMPTY)  # each fact once (incident_main)
        if len(ids) and (span is not None or cutoff is not None):
            lo_t, hi_t = span if span is not None else (NEG_INF, POS_INF)
            if cutoff is not None:
                lo_t, hi_t = _clipped_window(lo_t, hi_t, cutoff)
            ids = ids[(self.column("t0", ids) <= hi_t) & (self.column("t1", ids) >= lo_t)]
        return np.sort(ids) if ordered else ids

    def _entity_ids(self, names: str | Iterable[str]) -> IntArray:
        """Ids of the known entities among ``names`` (unknown names are dropped)."""
        get = self._ent_id.get
        return np.asarray([i for i in map(get, entity_names(names)) if i is not None], dtype=np.int64)

    def _all_ids(self, cutoff: int | None = None) -> IntArray:
        """Every fact id (those starting before day ``cutoff`` if given), in insertion order."""
        if cutoff is None:
            st = self._st
            ids = np.arange(st.n_total, dtype=np.int64)
            return ids[~np.isin(ids, st.dead)] if len(st.dead) else ids
        return np.sort(self._ids(None, None, None, None, cutoff))

    def _name_rank(self) -> IntArray:
        """Entity id → its position in name order (built once per vocabulary size)."""
        rank = self._rank[0]
        if rank is None or len(rank) != len(self._ent):
            order = np.asarray(sorted(range(len(self._ent)), key=self._ent.__getitem__), dtype=np.int64)
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order), dtype=np.int64)
            self._rank[0] = rank
        return rank

    def incident(
        self,
        entity: str,
        *,
        relation: str | None = None,
        time: TimeQuery = None,
        cutoff: int | None = None,
    ) -> list[Fact]:
        """Facts with ``entity`` as subject or object (self-loops once), by start time: two index searches."""
        e = self._ent_id.get(entity)
        if e is None:
            return []
        out = self._ids(entity, relation, None, time, cutoff)
        inn = self._ids(None, relation, entity, time, cutoff)
        if len(inn):
            inn = inn[self.column("s", inn) != e]
        if len(out) and len(inn):
            ids = np.concatenate([out, inn])
            ids = ids[np.lexsort((ids, self.column("t0", ids)))]  # by start, ties by insertion order
        else:
            ids = out if len(out) else inn
        return self._build(ids)

    def _query_hop(self, query: HopQuery, cutoff: int | None = None) -> Hop:
        """One breadth-first step (see :meth:`tkgqa.kg.KGStore.hop`): a few numpy operations per call."""
        front = self._entity_ids(query.frontier)
        vis = self._entity_ids(query.visited)
        span = None if query.time is None else query_window(query.time)
        new_facts_only, max_neighbors = query.new_facts_only, query.max_neighbors
        ids = self.incident_ids(front, span=span, cutoff=cutoff, ordered=False) if len(front) else _EMPTY
        n_ent = len(self._ent)
        s = o = _EMPTY
        if len(ids) and ((new_facts_only and len(vis)) or max_neighbors != 0):
            s, o = self.column("s", ids), self.column("o", ids)
        if new_facts_only and len(vis) and len(ids):
            touched = np.zeros(n_ent, dtype=bool)
            touched[vis] = True
            keep = ~(touched[s] | touched[o])
            ids, s, o = ids[keep], s[keep], o[keep]
        counts = np.bincount(self.column("r", ids), minlength=len(self._rel))
        relations = {self._rel[i]: int(counts[i]) for i in np.flatnonzero(counts).tolist()}
        neighbors: tuple[str, ...] = ()
        if max_neighbors != 0 and len(ids):
            seen = np.zeros(n_ent, dtype=bool)
            seen[front] = True
            seen[vis] = True
            ends = np.concatenate([s, o])
            ends = ends[~seen[ends]]
            if len(ends):
                ends_per_entity = np.bincount(ends, minlength=n_ent)
                cand = np.flatnonzero(ends_per_entity)
                cand = cand[np.lexsort((self._name_rank()[cand], -ends_per_entity[cand]))]
                if max_neighbors is not None:
                    cand = cand[:max_neighbors]
                neighbors = tuple(self._ent[i] for i in cand.tolist())
        return Hop(len(ids), relations, neighbors)

    def relation_counts(self, entity: str | None = None, *, cutoff: int | None = None) -> dict[str, int]:
        if entity is not None:
            return self._query_hop(HopQuery(entity, max_neighbors=0), cutoff=cutoff).relations
        counts = np.bincount(self.column("r", self._all_ids(cutoff)), minlength=len(self._rel))
        return {self._rel[i]: int(n) for i, n in enumerate(counts.tolist()) if n}

    def time_span(
        self, entity: str | None = None, *, cutoff: int | None = None
    ) -> tuple[TimePoint | None, TimePoint | None]:
        if entity is None:
            ids = self._all_ids(cutoff)
        else:
            ids = self.incident_ids(self._entity_ids(entity), cutoff=cutoff, ordered=False)
        if not len(ids):
            return (None, None)
        t0, g0 = self.column("t0", ids), self.column("g0", ids)
        t1, g1 = self.column("t1", ids), self.column("g1", ids)
        known0, known1 = g0 > 0, g1 > 0
        if cutoff is not None:
            known1 &= t1 < cutoff  # clipped at the cutoff: an open end (see ``as_of``)
        first = None
        if known0.any():
            i = int(np.argmin(np.where(known0, t0 * 4 + g0, np.iinfo(np.int64).max)))  # TimePoint order
            first = self._point(int(t0[i]), int(g0[i]))
        # The last point: each fact's end, or its start when the end is open (its last day is then within a
        # year of ``t0``): only the facts that may reach the latest last day are turned into points.
        has_last = known1 | known0
        if not has_last.any():
            return (first, None)
        lowest = np.where(known1, t1, t0)[has_last].max()
        near = has_last & (np.where(known1, t1, t0 + 366) >= lowest)
        keys = np.unique(np.where(known1, t1 * 4 + g1, t0 * 4 + g0)[near]).tolist()
        points = [cast(TimePoint, self._point(k >> 2, k & 3)) for k in keys]  # granularity > 0 here
        return (first, max(points, key=lambda p: (p.last_day, p.first_day)))
