"""CIK-LLM §3.1.1 "Pruning the Evidence Set": two rule-based stages and what happens above δ2.

1. :func:`multi_hop_truncation` (per question entity) — drop the farthest hop, then the next, until fewer
   than ``δ1`` facts remain; a 1-hop set is left alone.
2. Time-aware pruning (:func:`time_aware_prune`) with one of two time rules (:class:`~.config.TimePruning`):

   * :func:`anchor_spans` + :func:`near_anchors` — the paper's (footnote 2): a fact is kept when it lies
     within ``margin`` days (one year) of at least one fact involving a question entity, i.e. discarded
     when "distant in time more than one year from any fact that involves a question entity";
   * :func:`lifetime_window` — ours: the question entities' lifetimes widened by the margin, their
     intersection (their union when they never meet).

   Then, with several question entities, per ``(relation, tail)`` only the longest-lasting fact is kept.
   The *tail* is the second entity of the triple as read from the question entity, i.e. the entity the
   traversal reached through the fact (so facts met in the inverse direction group by their subject).
3. Above ``δ2`` (:class:`~.config.Delta2Rule`): nothing (the paper: no selection rule, Table 3's 21 ± 36
   facts); :func:`truncate_hops` (stage 1's rule with δ2); or :func:`cap_facts` (ours: at most δ2, the
   nearest hops first and, within a hop, the facts best satisfying the question's time constraint — TimeR4's
   φ_t on ``before/after/in/first/last`` read from the question; without a constraint the most recent).

Times are closed day spans; an open end runs on (still true), an open start reaches back without bound; a
fact with no time at all is kept by every time rule (nothing to measure).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...kg import Fact, KGStore
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
    """The fact's day span: open ends unbounded (``tkgqa.time.semantics``)."""
    lo = fact.start.first_day if fact.start else NEG_INF
    hi = fact.end.last_day if fact.end else POS_INF
    return lo, hi


def truncate_hops(items: Sequence[EvidenceFact], delta: int) -> list[EvidenceFact]:
    """Stage 1's rule on a flat set: drop the farthest hop while at least ``delta`` facts remain and more
    than one hop is left (the 1-hop facts are never cut)."""
    kept = list(items)
    while len(kept) >= delta:
        far = max((it.hop for it in kept), default=1)
        if far <= 1:
            break
        kept = [it for it in kept if it.hop < far]
    return kept


Spans = tuple[tuple[int, ...], tuple[int, ...]]


def anchor_spans(kg: KGStore, entities: Iterable[str], margin_days: int = ONE_YEAR_DAYS) -> Spans | None:
    """Footnote 2's anchors: the day spans of every fact involving a question entity, widened by
    ``margin_days`` and merged, as ``(starts, ends)`` of disjoint sorted spans; ``None`` when no such fact
    has a time (nothing to measure distance from: no pruning)."""
    spans: list[tuple[int, int]] = []
    for e in entities:
        for f in kg.incident(e):
            if f.start is None and f.end is None:
                continue
            lo, hi = _span(f)
            spans.append(
                (lo - margin_days if lo > NEG_INF else NEG_INF, hi + margin_days if hi < POS_INF else POS_INF)
            )
    if not spans:
        return None
    spans.sort()
    starts, ends = [spans[0][0]], [spans[0][1]]
    for lo, hi in spans[1:]:
        if lo <= ends[-1]:
            ends[-1] = max(ends[-1], hi)
        else:
            starts.append(lo)
            ends.append(hi)
    return tuple(starts), tuple(ends)


def near_anchors(fact: Fact, anchors: Spans) -> bool:
    """The fact's span meets a widened anchor span (it lies within the margin of a question-entity fact)."""
    if fact.start is None and fact.end is None:
        return True
    lo, hi = _span(fact)
    starts, ends = anchors
    i = bisect_right(starts, hi) - 1  # the last anchor starting no later than the fact ends
    return i >= 0 and ends[i] >= lo


def lifetime_window(
    kg: KGStore, entities: Iterable[str], margin_days: int = ONE_YEAR_DAYS
) -> tuple[int, int] | None:
    """Day window of the question entities' lifetimes widened by ``margin_days`` (see the module doc): from
    the earliest known start to the latest end of their facts, an open end running on (a membership still
    true in a snapshot keeps the entity alive)."""
    spans: list[tuple[int, int]] = []
    for e in entities:
        timed = [f for f in kg.incident(e) if f.start is not None or f.end is not None]
        if not timed:
            continue
        starts = [f.start.first_day for f in timed if f.start is not None]
        lo = min(starts) - margin_days if starts else NEG_INF
        hi = max(_span(f)[1] for f in timed)
        spans.append((lo, hi + margin_days if hi < POS_INF else POS_INF))
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
    items: Sequence[EvidenceFact],
    window: tuple[int, int] | None = None,
    *,
    several_entities: bool,
    anchors: Spans | None = None,
) -> list[EvidenceFact]:
    """Stage 2: facts meeting ``window`` (the lifetime rule) and near ``anchors`` (the footnote rule), each
    when given; with several question entities, the longest per (relation, tail)."""
    kept = list(items)
    if window is not None:
        lo, hi = window
        kept = [it for it in kept if _span(it.fact)[1] >= lo and _span(it.fact)[0] <= hi]
    if anchors is not None:
        kept = [it for it in kept if near_anchors(it.fact, anchors)]
    if several_entities:
        kept = longest_per_relation_tail(kept)
    return kept


def cap_facts(
    items: Sequence[EvidenceFact], delta2: int, constraint: TimeConstraint | None
) -> list[EvidenceFact]:
    """Ours: at most ``delta2`` facts (see the module docstring); the survivors keep their original order."""
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
