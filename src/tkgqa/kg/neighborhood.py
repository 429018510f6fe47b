"""Neighbourhoods of an entity: its 1-hop subgraph, relations within ``n`` hops, its lifetime.

Written against the :class:`KGStore` protocol only (``incident``, ``hop``, ``time_span``): each store answers
those from its own indexes (the in-memory store in a few vectorised numpy operations per hop).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import NotFoundError
from ..time import TimePoint
from .base import KGStore, TimeQuery
from .fact import Fact

DEFAULT_MAX_FRONTIER = 2000


@dataclass(frozen=True, slots=True)
class EntityLifetime:
    """When an entity appears in the KG: the earliest start and the latest end (or start) of its facts."""

    entity: str
    first: TimePoint | None
    last: TimePoint | None
    n_facts: int

    def to_dict(self) -> dict[str, object]:
        return {
            "entity": self.entity,
            "first": self.first.iso() if self.first else None,
            "last": self.last.iso() if self.last else None,
            "n_facts": self.n_facts,
        }


def _require_entity(kg: KGStore, entity: str) -> None:
    if not kg.has_entity(entity):
        from .linking import EntityLinker

        suggestions = [c.name for c in EntityLinker.from_kg(kg).suggest(entity, k=5)]
        raise NotFoundError(f"entity {entity!r} is not in KG {kg.name!r}", suggestions=suggestions)


def subgraph(kg: KGStore, entity: str, *, time: TimeQuery = None, limit: int | None = None) -> list[Fact]:
    """The 1-hop subgraph: facts with ``entity`` as subject or object (overlapping ``time`` if given),
    ordered by start time."""
    _require_entity(kg, entity)
    out = kg.incident(entity, time=time)
    return out[:limit] if limit is not None else out


def neighbors(kg: KGStore, entity: str, *, time: TimeQuery = None) -> list[str]:
    """Entities sharing a fact with ``entity``, most connected first."""
    counts = Counter(f.object if f.subject == entity else f.subject for f in subgraph(kg, entity, time=time))
    counts.pop(entity, None)
    return [e for e, _ in ranked(counts)]


def relations_by_hop(
    kg: KGStore,
    entity: str,
    hops: int = 2,
    *,
    time: TimeQuery = None,
    max_frontier: int = DEFAULT_MAX_FRONTIER,
) -> dict[int, list[str]]:
    """Relations first met at distance ``1..hops`` from ``entity`` (distance 1 = on its own facts), each
    hop's list most frequent first. At most ``max_frontier`` entities (the most connected) are expanded
    per hop, which bounds the cost on hubs."""
    _require_entity(kg, entity)
    seen_rel: set[str] = set()
    visited: set[str] = set()
    frontier = [entity]
    result: dict[int, list[str]] = {}
    for hop in range(1, hops + 1):
        step = kg.hop(frontier, time=time, visited=visited, max_neighbors=max_frontier if hop < hops else 0)
        result[hop] = [r for r, _ in ranked(step.relations) if r not in seen_rel]
        seen_rel.update(result[hop])
        if hop == hops:
            break
        visited.update(frontier)
        frontier = list(step.neighbors)
        if not frontier:
            result.update({h: [] for h in range(hop + 1, hops + 1)})
            break
    return result


def ranked(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """``counts`` most frequent first, ties by name."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def entity_lifetime(kg: KGStore, entity: str) -> EntityLifetime:
    """First and last time ``entity`` appears (earliest start; latest end, or start for open ends)."""
    _require_entity(kg, entity)
    first, last = kg.time_span(entity)
    return EntityLifetime(entity, first, last, kg.hop(entity, max_neighbors=0).n_facts)
