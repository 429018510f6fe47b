"""``ListStore``: the :class:`~tkgqa.kg.KGStore` protocol implemented naively over a Python list.

It is the executable specification of the protocol: every query is a scan written as plainly as the rules in
:mod:`tkgqa.kg.base` read, so the store conformance suite (``tests/kg/test_store_conformance.py``) can hold
every real backend to the same answers. Not meant for real KGs (each query is O(facts)); also exported as
``tkgqa.testing.ListStore``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence

from ..errors import ConfigError
from ..time import NEG_INF, POS_INF, TimeArg, TimePoint
from .base import FactQuery, Hop, HopQuery, StoreBase, TimeQuery, clip_at, entity_names, query_window
from .fact import Fact, label_of
from .validate import check_name


def _start(f: Fact) -> int:
    return f.start.first_day if f.start is not None else NEG_INF


def _end(f: Fact) -> int:
    return f.end.last_day if f.end is not None else POS_INF


class ListStore(StoreBase):
    """A list of facts in insertion order; ``as_of`` views share the list (see :mod:`tkgqa.kg.base`)."""

    def __init__(
        self, facts: Iterable[Fact] = (), *, labels: Mapping[str, str] | None = None, name: str = "list"
    ) -> None:
        self.name = name
        self._facts: list[Fact] = []
        self._keys: set[tuple[str, str, str, int, int]] = set()
        self._entities: dict[str, None] = {}  # insertion-ordered sets
        self._relations: dict[str, None] = {}
        self._labels = dict(labels or {})
        self._root = self
        self._cutoff: TimePoint | None = None
        self.add(facts)

    def _rows(self) -> list[Fact]:
        """The facts this store shows: all, or for a view those starting before the cutoff, clipped."""
        if self._cutoff is None:
            return self._root._facts
        cut = self._cutoff.first_day
        return [clip_at(f, cut) for f in self._root._facts if _start(f) < cut]

    # --- vocabulary ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._rows())

    def __iter__(self) -> Iterator[Fact]:
        return iter(list(self._rows()))

    @property
    def entities(self) -> Sequence[str]:
        return list(self._root._entities)

    @property
    def relations(self) -> Sequence[str]:
        return list(self._root._relations)

    @property
    def labels(self) -> Mapping[str, str]:
        return self._root._labels

    @property
    def live(self) -> ListStore:
        return self._root

    def has_entity(self, name: str) -> bool:
        return name in self._root._entities

    def has_relation(self, name: str) -> bool:
        return name in self._root._relations

    def label(self, name: str) -> str:
        return label_of(name, self._root._labels)

    # --- queries ------------------------------------------------------------------------------------
    def _query_facts(self, query: FactQuery) -> list[Fact]:
        subject, relation, object, limit = query.subject, query.relation, query.object, query.limit
        lo, hi = query_window(query.time)
        found = [
            f
            for f in self._rows()
            if (subject is None or f.subject == subject)
            and (relation is None or f.relation == relation)
            and (object is None or f.object == object)
            and _start(f) <= hi
            and _end(f) >= lo
        ]
        found.sort(key=_start)  # stable: ties stay in insertion order
        return found[:limit] if limit is not None else found

    def _query_count(self, query: FactQuery) -> int:
        return len(self._query_facts(query))

    def incident(self, entity: str, *, relation: str | None = None, time: TimeQuery = None) -> list[Fact]:
        lo, hi = query_window(time)
        found = [
            f
            for f in self._rows()
            if entity in (f.subject, f.object)
            and (relation is None or f.relation == relation)
            and _start(f) <= hi
            and _end(f) >= lo
        ]
        found.sort(key=_start)
        return found

    def _query_hop(self, query: HopQuery) -> Hop:
        front, done = set(entity_names(query.frontier)), set(entity_names(query.visited))
        new_facts_only, max_neighbors = query.new_facts_only, query.max_neighbors
        lo, hi = query_window(query.time)
        met = [
            f
            for f in self._rows()
            if (f.subject in front or f.object in front) and _start(f) <= hi and _end(f) >= lo
        ]
        if new_facts_only:
            met = [f for f in met if f.subject not in done and f.object not in done]
        ends = Counter(e for f in met for e in (f.subject, f.object) if e not in front and e not in done)
        ranked = sorted(ends, key=lambda e: (-ends[e], e))
        neighbors = ranked if max_neighbors is None else ranked[:max_neighbors]
        return Hop(len(met), dict(Counter(f.relation for f in met)), tuple(neighbors))

    def relation_counts(self, entity: str | None = None) -> dict[str, int]:
        rows = self._rows() if entity is None else self.incident(entity)
        return dict(Counter(f.relation for f in rows))

    def time_span(self, entity: str | None = None) -> tuple[TimePoint | None, TimePoint | None]:
        rows = self._rows() if entity is None else self.incident(entity)
        starts = [f.start for f in rows if f.start is not None]
        lasts = [p for f in rows if (p := f.end or f.start) is not None]
        return (
            min(starts) if starts else None,
            max(lasts, key=lambda p: (p.last_day, p.first_day)) if lasts else None,
        )

    # --- appends and views --------------------------------------------------------------------------
    def add(self, facts: Iterable[Fact]) -> int:
        if self._root is not self:
            raise ConfigError("a snapshot is read-only; add facts to the live store it was taken from")
        added = 0
        for f in facts:
            key = (f.subject, f.relation, f.object, _start(f), _end(f))
            if key in self._keys:
                continue
            for name, what in ((f.subject, "subject"), (f.relation, "relation"), (f.object, "object")):
                if name not in self._entities and name not in self._relations:
                    check_name(name, what)  # the one rule for names (tkgqa.kg.validate)
            self._keys.add(key)
            self._facts.append(f)
            for name in (f.subject, f.object):
                self._entities.setdefault(name)
            self._relations.setdefault(f.relation)
            added += 1
        return added

    def as_of(self, cutoff: TimeArg) -> ListStore:
        point = TimePoint.of(cutoff)
        view = ListStore()
        view._root = self._root
        view._cutoff = point if self._cutoff is None else min(point, self._cutoff)
        view.name = f"{self._root.name}<{view._cutoff}"
        return view
