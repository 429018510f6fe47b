"""The atomic TKG operators of ARI (Table 6) as library functions returning facts.

Entity lookups run against a store; the temporal filters (before/after/between/first/last) work on any list
of facts, so every method can chain them. Time arguments accept a ``TimePoint``, an ``Interval`` or a string
(``"2015"``, ``"2015-03"``, ``"2015-03-21"``, ``"Mar 2015"``) and honour granularity: *before 2015* means
before 2015-01-01, and a month constraint matches the day facts inside that month. What before/after/
between/during mean is defined once, in :mod:`tkgqa.time.semantics` (a fact is *before* ``t`` when it starts
before ``t`` begins); these functions only apply it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from ..time import Extreme, Interval, TemporalRelation, TimeLike, TimePoint, extreme, predicate, span_of
from .base import KGStore, TimeQuery
from .fact import Fact

#: A time span argument of the operators: a point, an interval, or text that :meth:`Interval.parse` reads.
SpanArg = TimeLike | str


@lru_cache(maxsize=4096)
def _parse_span(text: str) -> tuple[int, int]:
    return span_of(Interval.parse(text))


def _span(t: SpanArg) -> tuple[int, int]:
    """Day span of a time argument (strings are parsed once and memoised: parsing is pure)."""
    if isinstance(t, str):
        return _parse_span(t)
    return span_of(t)


def get_tail_entity(
    kg: KGStore, head: str, rel: str, time: TimeQuery = None, *, both_directions: bool = False
) -> list[Fact]:
    """Facts ``(head, rel, ?, t)``; with ``both_directions`` also ``(?, rel, head, t)``."""
    return _facts_at(kg, head, rel, time, as_subject=True, both_directions=both_directions)


def get_head_entity(
    kg: KGStore, tail: str, rel: str, time: TimeQuery = None, *, both_directions: bool = False
) -> list[Fact]:
    """Facts ``(?, rel, tail, t)``; with ``both_directions`` also ``(tail, rel, ?, t)``."""
    return _facts_at(kg, tail, rel, time, as_subject=False, both_directions=both_directions)


def _facts_at(
    kg: KGStore, entity: str, rel: str, time: TimeQuery, *, as_subject: bool, both_directions: bool
) -> list[Fact]:
    """Facts with ``entity`` as subject (``as_subject``) or object under ``rel``; with ``both_directions``
    those with it at the other end merged in (by start time)."""
    subject, obj = (entity, None) if as_subject else (None, entity)
    found = kg.facts(subject=subject, relation=rel, object=obj, time=time)
    if both_directions:
        found = _merge(found, kg.facts(subject=obj, relation=rel, object=subject, time=time))
    return found


def get_time(kg: KGStore, head: str, rel: str, tail: str, *, both_directions: bool = False) -> list[Fact]:
    """Facts ``(head, rel, tail, ?)`` (their times are the answer)."""
    found = kg.facts(subject=head, relation=rel, object=tail)
    if both_directions:
        found = _merge(found, kg.facts(subject=tail, relation=rel, object=head))
    return found


def _keep(facts: Iterable[Fact], relation: TemporalRelation, lo: int, hi: int) -> list[Fact]:
    test = predicate(relation)
    return [f for f in facts if test(f.start, f.end, lo, hi)]


def get_before(facts: Iterable[Fact], t: SpanArg) -> list[Fact]:
    """Facts that start before ``t`` begins (relation ``before``)."""
    return _keep(facts, TemporalRelation.BEFORE, *_span(t))


def get_after(facts: Iterable[Fact], t: SpanArg) -> list[Fact]:
    """Facts that start after ``t`` ends (relation ``after``)."""
    return _keep(facts, TemporalRelation.AFTER, *_span(t))


def get_between(facts: Iterable[Fact], t1: SpanArg, t2: SpanArg) -> list[Fact]:
    """Facts lying wholly within ``[t1, t2]``, inclusive at each bound's granularity (relation ``within``)."""
    return _keep(facts, TemporalRelation.WITHIN, _span(t1)[0], _span(t2)[1])


def get_during(facts: Iterable[Fact], t: SpanArg) -> list[Fact]:
    """Facts that share at least one day with ``t`` (relation ``in``; an open end runs on)."""
    return _keep(facts, TemporalRelation.IN, *_span(t))


def get_first(facts: Iterable[Fact]) -> list[Fact]:
    """The facts with the earliest start (all of them when tied)."""
    return extreme(facts, Extreme.FIRST, _start)


def get_last(facts: Iterable[Fact]) -> list[Fact]:
    """The facts with the latest start (all of them when tied)."""
    return extreme(facts, Extreme.LAST, _start)


def _start(fact: Fact) -> TimePoint | None:
    return fact.start


def other_entity(fact: Fact, entity: str) -> str:
    """The entity on the other side of ``fact`` from ``entity`` (the object if ``entity`` is the subject)."""
    return fact.object if fact.subject == entity else fact.subject


def _merge(a: Sequence[Fact], b: Sequence[Fact]) -> list[Fact]:
    seen = set(a)
    merged = list(a) + [f for f in b if f not in seen]
    merged.sort(key=lambda f: f.start.first_day if f.start else 0)
    return merged


OPERATORS = {
    "get_tail_entity": get_tail_entity,
    "get_head_entity": get_head_entity,
    "get_time": get_time,
    "get_before": get_before,
    "get_after": get_after,
    "get_between": get_between,
    "get_during": get_during,
    "get_first": get_first,
    "get_last": get_last,
}
