"""The atomic TKG operators of ARI (Table 6) as library functions returning facts.

Entity lookups run against a store; the temporal filters (before/after/between/first/last) work on any list
of facts, so every method can chain them. Time arguments accept a ``TimePoint``, an ``Interval`` or a string
(``"2015"``, ``"2015-03"``, ``"2015-03-21"``, ``"Mar 2015"``) and honour granularity: *before 2015* means
before 2015-01-01, and a month constraint matches the day facts inside that month.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..time import Interval, TimePoint, after, before, span_of, within
from .base import KGStore, TimeQuery
from .fact import Fact

TimeArg = TimePoint | Interval | str


def _as_time(t: TimeArg) -> TimePoint | Interval:
    if isinstance(t, str):
        return Interval.parse(t)
    return t


def get_tail_entity(
    kg: KGStore, head: str, rel: str, time: TimeQuery = None, *, both_directions: bool = False
) -> list[Fact]:
    """Facts ``(head, rel, ?, t)``; with ``both_directions`` also ``(?, rel, head, t)``."""
    found = kg.facts(subject=head, relation=rel, time=time)
    if both_directions:
        found = _merge(found, kg.facts(relation=rel, object=head, time=time))
    return found


def get_head_entity(
    kg: KGStore, tail: str, rel: str, time: TimeQuery = None, *, both_directions: bool = False
) -> list[Fact]:
    """Facts ``(?, rel, tail, t)``; with ``both_directions`` also ``(tail, rel, ?, t)``."""
    found = kg.facts(relation=rel, object=tail, time=time)
    if both_directions:
        found = _merge(found, kg.facts(subject=tail, relation=rel, time=time))
    return found


def get_time(kg: KGStore, head: str, rel: str, tail: str, *, both_directions: bool = False) -> list[Fact]:
    """Facts ``(head, rel, tail, ?)`` (their times are the answer)."""
    found = kg.facts(subject=head, relation=rel, object=tail)
    if both_directions:
        found = _merge(found, kg.facts(subject=tail, relation=rel, object=head))
    return found


def get_before(facts: Iterable[Fact], t: TimeArg) -> list[Fact]:
    """Facts that end strictly before ``t`` begins."""
    ref = _as_time(t)
    return [f for f in facts if f.start is not None and before(f.end or f.start, ref)]


def get_after(facts: Iterable[Fact], t: TimeArg) -> list[Fact]:
    """Facts that start strictly after ``t`` ends."""
    ref = _as_time(t)
    return [f for f in facts if f.start is not None and after(f.start, ref)]


def get_between(facts: Iterable[Fact], t1: TimeArg, t2: TimeArg) -> list[Fact]:
    """Facts lying within ``[t1, t2]`` (inclusive, at each bound's granularity)."""
    lo, hi = span_of(_as_time(t1))[0], span_of(_as_time(t2))[1]
    window = Interval(TimePoint.from_ordinal(lo), TimePoint.from_ordinal(hi))
    return [f for f in facts if f.start is not None and within(f.interval if f.end else f.start, window)]


def get_during(facts: Iterable[Fact], t: TimeArg) -> list[Fact]:
    """Facts that share at least one day with ``t`` (the "in/on" constraint)."""
    ref = span_of(_as_time(t))
    return [
        f for f in facts if f.start is not None and f.start.first_day <= ref[1] and f.interval.last_day >= ref[0]
    ]


def get_first(facts: Iterable[Fact]) -> list[Fact]:
    """The facts with the earliest start (all of them when tied)."""
    dated = [f for f in facts if f.start is not None]
    if not dated:
        return []
    first = min(f.start.first_day for f in dated if f.start)
    return [f for f in dated if f.start and f.start.first_day == first]


def get_last(facts: Iterable[Fact]) -> list[Fact]:
    """The facts with the latest start (all of them when tied)."""
    dated = [f for f in facts if f.start is not None]
    if not dated:
        return []
    last = max(f.start.first_day for f in dated if f.start)
    return [f for f in dated if f.start and f.start.first_day == last]


def other_entity(fact: Fact, entity: str) -> str:
    """The entity on the other side of ``fact`` from ``entity`` (the object if ``entity`` is the subject)."""
    return fact.object if fact.subject == entity else fact.subject


def _merge(a: Sequence[Fact], b: Sequence[Fact]) -> list[Fact]:
    seen = set(a)
    merged = list(a) + [f for f in b if f not in seen]
    merged.sort(key=lambda f: (f.start.first_day if f.start else 0))
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
