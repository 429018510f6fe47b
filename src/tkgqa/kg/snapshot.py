"""``KGSnapshot``: the read-only ``as_of`` view of a :class:`~tkgqa.kg.TemporalKG`.

The view holds the facts that start before the cutoff, clipped at it (:func:`~tkgqa.kg.base.clip_at`: an
end on or after the cutoff's first day becomes open, "still true at the cutoff"), so that no date after the
cutoff leaks into it — the rule of :mod:`tkgqa.kg.base`. The live store applies the cutoff inside its index
searches (time windows included); the view clips the facts it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..time import TimeArg, TimePoint
from .base import FactQuery, Hop, HopQuery, StoreBase, TimeQuery, clip_at
from .fact import Fact

if TYPE_CHECKING:
    from .memory import TemporalKG


class KGSnapshot(StoreBase):
    """Read-only view of a :class:`TemporalKG` holding only facts that start before ``cutoff``, clipped at
    it (see the module docstring).

    The view reads the live store, so facts appended to it later (and starting before the cutoff) appear.
    Every query runs on the live store's indexes with the cutoff applied inside the search.
    """

    def __init__(self, base: TemporalKG, cutoff: TimePoint) -> None:
        self.base = base
        self.cutoff = cutoff
        self.name = f"{base.name}<{cutoff}"
        self._cut = cutoff.first_day

    def __len__(self) -> int:
        return self.base._query_count(FactQuery(), cutoff=self._cut)

    def __iter__(self) -> Iterator[Fact]:
        cut = self._cut
        return (clip_at(f, cut) for f in self.base._iter_ids(self.base._all_ids(cut)))

    def _clip(self, facts: list[Fact]) -> list[Fact]:
        cut = self._cut
        return [f if f.end is None or f.end.last_day < cut else clip_at(f, cut) for f in facts]

    @property
    def entities(self) -> Sequence[str]:
        return self.base.entities

    @property
    def relations(self) -> Sequence[str]:
        return self.base.relations

    @property
    def live(self) -> TemporalKG:
        return self.base

    def has_entity(self, name: str) -> bool:
        return self.base.has_entity(name)

    def has_relation(self, name: str) -> bool:
        return self.base.has_relation(name)

    def label(self, name: str) -> str:
        return self.base.label(name)

    def _query_facts(self, query: FactQuery) -> list[Fact]:
        return self._clip(self.base._query_facts(query, cutoff=self._cut))

    def _query_count(self, query: FactQuery) -> int:
        return self.base._query_count(query, cutoff=self._cut)

    def incident(self, entity: str, *, relation: str | None = None, time: TimeQuery = None) -> list[Fact]:
        return self._clip(self.base.incident(entity, relation=relation, time=time, cutoff=self._cut))

    def _query_hop(self, query: HopQuery) -> Hop:
        return self.base._query_hop(query, cutoff=self._cut)

    def relation_counts(self, entity: str | None = None) -> dict[str, int]:
        return self.base.relation_counts(entity, cutoff=self._cut)

    def add(self, facts: Iterable[Fact]) -> int:
        raise ConfigError("a snapshot is read-only; add facts to the live store it was taken from")

    def as_of(self, cutoff: TimeArg) -> KGSnapshot:
        point = TimePoint.of(cutoff)
        return KGSnapshot(self.base, min(point, self.cutoff))

    def time_span(self, entity: str | None = None) -> tuple[TimePoint | None, TimePoint | None]:
        return self.base.time_span(entity, cutoff=self._cut)
