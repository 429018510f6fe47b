"""CIK-LLM §3.1.1 "Pruning the Evidence Set": two rule-based stages and the final cap.

1. :func:`multi_hop_truncation` (per question entity) — drop the farthest hop, then the next, until fewer
   than ``δ1`` facts remain; a 1-hop set is left alone.
2. :func:`time_aware_prune` — keep the facts that lie within ``margin`` days (one year) of the lifetime of
   the question entities (footnote 2: facts more than a year away from every question-entity fact go). With
   several question entities the window is the intersection of their (widened) lifetimes, or their union
   when they never meet; then, per ``(relation, tail)``, only the longest-lasting fact is kept. The *tail*
   is the second entity of the triple as read from the question entity, i.e. the entity the traversal
   reached through the fact (so facts met in the inverse direction group by their subject).
3. :func:`cap_facts` — at most ``δ2`` facts. The paper does not say which ones survive; we keep the nearest
   hops first and, within a hop, the facts best satisfying the question's time constraint (TimeR4's φ_t on
   ``before/after/in/first/last`` read from the question); without a constraint the most recent ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...kg import Fact, KGStore
from ...kg.neighborhood import entity_lifetime
from ...retrieval.temporal import TimeConstraint, time_scores
from ...time import NEG_INF, POS_INF

ONE_YEAR_DAYS = 365


@dataclass(frozen=True, slots=True)
class EvidenceFact:
    """A collected fact, the question entity whose traversal found it and its hop (1 = adjacent)."""

    entity: str
    hop: int
    fact: Fact
    tail: str = ""  # the entity the traversal reached through the fact ("" = the fact's object)

    @property
    def reached(self) -> str:
        return self.tail or self.fact.object


def flatten(
    entity: str, hops: Sequence[Sequence[Fact]], reached: Mapping[Fact, str] | None = None
) -> list[EvidenceFact]:
    ends = reached or {}
    return [
        EvidenceFact(entity, k, f, ends.get(f, "")) for k, facts in enumerate(hops, start=1) for f in facts
    ]


def multi_hop_truncation(hops: Sequence[Sequence[Fact]], delta1: int) -> list[Sequence[Fact]]:
    """Stage 1: drop hops from the farthest until ``|F| < delta1`` (only hop 1 left: stop)."""
    kept = list(hops)
    while len(kept) > 1 and sum(len(h) for h in kept) >= delta1:
        kept.pop()
    return kept


def _span(fact: Fact) -> tuple[int, int]:
    lo = fact.start.first_day if fact.start else NEG_INF
    hi = fact.end.last_day if fact.end else (fact.start.last_day if fact.start else POS_INF)
    return lo, hi


def lifetime_window(
    kg: KGStore, entities: Iterable[str], margin_days: int = ONE_YEAR_DAYS
) -> tuple[int, int] | None:
    """Day window of the question entities' lifetimes widened by ``margin_days`` (see the module doc)."""
    spans: list[tuple[int, int]] = []
    for e in entities:
        if not kg.has_entity(e):
            continue
        life = entity_lifetime(kg, e)
        if life.n_facts == 0 or (life.first is None and life.last is None):
            continue
        lo = life.first.first_day - margin_days if life.first else NEG_INF
        hi = life.last.last_day + margin_days if life.last else POS_INF
        spans.append((lo, hi))
    if not spans:
        return None
    lo, hi = max(s[0] for s in spans), min(s[1] for s in spans)
    if lo <= hi:
        return lo, hi
    return min(s[0] for s in spans), max(s[1] for s in spans)


def longest_per_relation_tail(items: Sequence[EvidenceFact]) -> list[EvidenceFact]:
    """Per ``(relation, tail)`` keep the longest-lasting fact (ties: the earliest found); order kept."""
    best: dict[tuple[str, str], tuple[int, int]] = {}
    for i, item in enumerate(items):
        lo, hi = _span(item.fact)
        length = hi - lo
        key = (item.fact.relation, item.reached)
        if key not in best or length > best[key][0]:
            best[key] = (length, i)
    keep = {i for _, i in best.values()}
    return [item for i, item in enumerate(items) if i in keep]


def time_aware_prune(
    items: Sequence[EvidenceFact], window: tuple[int, int] | None, *, several_entities: bool
) -> list[EvidenceFact]:
    """Stage 2: facts meeting ``window``; with several question entities, longest per (relation, tail)."""
    kept = list(items)
    if window is not None:
        lo, hi = window
        kept = [it for it in kept if _span(it.fact)[1] >= lo and _span(it.fact)[0] <= hi]
    if several_entities:
        kept = longest_per_relation_tail(kept)
    return kept


def cap_facts(
    items: Sequence[EvidenceFact], delta2: int, constraint: TimeConstraint | None
) -> list[EvidenceFact]:
    """At most ``delta2`` facts (see the module docstring); the survivors keep their original order."""
    if len(items) <= delta2:
        return list(items)
    facts = [it.fact for it in items]
    if constraint is not None:
        score = time_scores(constraint, facts)
    else:
        starts = np.array([_span(f)[0] for f in facts], dtype=np.float64)
        score = starts  # most recent first
    hops = np.array([it.hop for it in items], dtype=np.int64)
    order = np.lexsort((np.arange(len(items)), -score, hops))[:delta2]
    keep = set(order.tolist())
    return [it for i, it in enumerate(items) if i in keep]


def dedupe(items: Iterable[EvidenceFact]) -> list[EvidenceFact]:
    """One entry per fact (the first, i.e. the nearest question entity/hop found first)."""
    seen: set[Fact] = set()
    out: list[EvidenceFact] = []
    for it in items:
        if it.fact not in seen:
            seen.add(it.fact)
            out.append(it)
    return out
