"""Neighbourhoods of an entity: its 1-hop subgraph, relations within ``n`` hops, its lifetime.

On a :class:`TemporalKG` (or a snapshot of one) every hop is a handful of vectorised numpy operations over
the store's subject/object indexes (:meth:`TemporalKG.incident_ids`); any other :class:`KGStore` is served
through ``facts()`` calls.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..errors import NotFoundError
from ..time import NEG_INF, POS_INF, Interval, TimePoint, span_of
from .base import KGStore, TimeQuery
from .fact import Fact
from .memory import KGSnapshot, TemporalKG

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


def _fast(kg: KGStore) -> tuple[TemporalKG, int | None] | None:
    """The underlying in-memory store and snapshot cutoff day, when ``kg`` is one."""
    if isinstance(kg, TemporalKG):
        return kg, None
    if isinstance(kg, KGSnapshot):
        return kg.base, kg.cutoff.first_day
    return None


def _span(time: TimeQuery) -> tuple[int, int] | None:
    if time is None:
        return None
    return span_of(Interval.parse(time) if isinstance(time, str) else time)


def subgraph(kg: KGStore, entity: str, *, time: TimeQuery = None, limit: int | None = None) -> list[Fact]:
    """The 1-hop subgraph: facts with ``entity`` as subject or object (overlapping ``time`` if given),
    ordered by start time."""
    _require_entity(kg, entity)
    out = kg.facts(subject=entity, time=time)
    out += [f for f in kg.facts(object=entity, time=time) if f.subject != entity]  # self-loops once
    out.sort(key=lambda f: f.start.first_day if f.start else NEG_INF)
    return out[:limit] if limit is not None else out


def neighbors(kg: KGStore, entity: str, *, time: TimeQuery = None) -> list[str]:
    """Entities sharing a fact with ``entity``, most connected first."""
    counts = Counter(f.object if f.subject == entity else f.subject for f in subgraph(kg, entity, time=time))
    counts.pop(entity, None)
    return [e for e, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


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
    fast = _fast(kg)
    if fast is not None:
        return _relations_by_hop_fast(fast[0], fast[1], entity, hops, _span(time), max_frontier)
    seen_rel: set[str] = set()
    seen_ent = {entity}
    frontier = [entity]
    result: dict[int, list[str]] = {}
    for hop in range(1, hops + 1):
        rel_counts: Counter[str] = Counter()
        next_counts: Counter[str] = Counter()
        for e in frontier:
            incident = kg.facts(subject=e, time=time)
            incident += [f for f in kg.facts(object=e, time=time) if f.subject != e]
            for f in incident:
                rel_counts[f.relation] += 1
                for other in (f.subject, f.object):
                    if other not in seen_ent:
                        next_counts[other] += 1
        result[hop] = [r for r, _ in _ranked(rel_counts) if r not in seen_rel]
        seen_rel.update(result[hop])
        frontier = [e for e, _ in _ranked(next_counts)[:max_frontier]]
        seen_ent.update(frontier)
        if not frontier:
            result.update({h: [] for h in range(hop + 1, hops + 1)})
            break
    return result


def _ranked(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _relations_by_hop_fast(
    kg: TemporalKG,
    cutoff: int | None,
    entity: str,
    hops: int,
    span: tuple[int, int] | None,
    max_frontier: int,
) -> dict[int, list[str]]:
    n_ent = len(kg.entities)
    seen_rel = np.zeros(len(kg.relations), dtype=bool)
    seen_ent = np.zeros(n_ent, dtype=bool)
    start = kg.entity_id(entity)
    seen_ent[start] = True
    frontier = np.asarray([start], dtype=np.int64)
    result: dict[int, list[str]] = {}
    for hop in range(1, hops + 1):
        ids = kg.incident_ids(frontier, span=span, cutoff=cutoff)
        rels = kg.column("r", ids)
        counts = np.bincount(rels, minlength=len(seen_rel))
        new = np.flatnonzero((counts > 0) & ~seen_rel)
        seen_rel[new] = True
        names = kg.relations
        result[hop] = sorted((names[i] for i in new.tolist()), key=lambda r: (-counts[kg.relation_id(r)], r))
        if hop == hops:
            break
        ends = np.concatenate([kg.column("s", ids), kg.column("o", ids)])
        ends = ends[~seen_ent[ends]]
        if not len(ends):
            result.update({h: [] for h in range(hop + 1, hops + 1)})
            break
        ent_counts = np.bincount(ends, minlength=n_ent)
        frontier = np.flatnonzero(ent_counts)
        if len(frontier) > max_frontier:  # keep the most connected (ties by name, as the generic path)
            ents = kg.entities
            ranked = sorted(frontier.tolist(), key=lambda i: (-ent_counts[i], ents[i]))
            frontier = np.asarray(ranked[:max_frontier], dtype=np.int64)
        seen_ent[frontier] = True
    return result


def entity_lifetime(kg: KGStore, entity: str) -> EntityLifetime:
    """First and last time ``entity`` appears (earliest start; latest end, or start for open ends)."""
    _require_entity(kg, entity)
    fast = _fast(kg)
    if fast is None:
        return _lifetime_of(entity, subgraph(kg, entity))
    store, cutoff = fast
    ids = store.incident_ids(np.asarray([store.entity_id(entity)]), cutoff=cutoff)
    if not len(ids):
        return EntityLifetime(entity, None, None, 0)
    g0, g1 = store.column("g0", ids), store.column("g1", ids)
    t0, t1 = store.column("t0", ids), store.column("t1", ids)
    first = last = None
    if (g0 > 0).any():
        first = store.fact(int(ids[int(np.argmin(np.where(g0 > 0, t0, POS_INF)))])).start
    ends = np.where(g1 > 0, t1, np.where(g0 > 0, t0, NEG_INF))
    if (ends > NEG_INF).any():
        f = store.fact(int(ids[int(np.argmax(ends))]))
        last = f.end or f.start
    return EntityLifetime(entity, first, last, len(ids))


def _lifetime_of(entity: str, facts: list[Fact]) -> EntityLifetime:
    starts = [f.start for f in facts if f.start is not None]
    ends = [p for f in facts if (p := f.end or f.start) is not None]
    return EntityLifetime(
        entity,
        min(starts, key=lambda p: p.first_day) if starts else None,
        max(ends, key=lambda p: p.last_day) if ends else None,
        len(facts),
    )
