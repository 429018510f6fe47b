"""The one time semantics of the project: how a fact's time relates to a reference time.

Every temporal filter — the symbolic executor, the ARI operators (:mod:`tkgqa.kg.operators`), ARI's compiled
actions, TimeR4's φ_t reranking, the contextual scorer — calls :func:`holds` (or :func:`keep`) with one
:class:`TemporalRelation`; none re-implements a comparison.

Times are closed spans of days. A point covers its year, month or day (``2015`` is 2015-01-01..2015-12-31);
a fact runs from its start's first day to its end's last day. An open end means *unbounded*: ``end=None``
on a fact with a start means still true (+∞); ``start=None`` on a fact with an end means it began at an
unknown time (−∞). A fact with neither time satisfies no relation. ``R = [r0, r1]`` is the reference span:

* ``in`` — the fact shares at least one day with R (an open end runs on).
  2015-03-21 → 2015-03: yes; 2015 → 2015-03: yes (the year overlaps March); 1990–1995 → 1993: yes;
  2001–(open) → 2010: yes.
* ``before`` — the fact *starts* before R begins: ``start.last_day < r0``.
  2014-12-31 → 2015: yes; 2015-03 → 2015: no (inside); 2015 → 2015-06: no (the year is not wholly before
  June); Juventus 1990–1995 → 1995: yes (it began in 1990).
* ``after`` — the fact *starts* after R ends: ``start.first_day > r1``.
  2016-01 → 2015: yes; 2015-12 → 2015: no; AC Milan 1995–1997 → 1990: yes, → 1995: no.
* ``since`` — the fact holds at some time from R's first day on: ``end.last_day >= r0`` (an open end runs
  on). "since 2016": a border that began 2016-01-01 and still holds: yes; a spell 1990–1995 → since 1994:
  yes, → since 1996: no. Unlike ``after``, it keeps what began at R or earlier and is still true.
* ``starts`` — the fact's start shares a day with R. 1990–1995 → 1990: yes; → 1991: no.
* ``ends`` — the fact's end shares a day with R. 1990–1995 → 1995: yes; an open end → 1995: no.
* ``within`` (``between``) — the fact lies wholly inside R: ``r0 <= start.first_day`` and
  ``end.last_day <= r1``. 1991–1994 → 1990/1995: yes; 1990–1996 → 1990/1995: no; an open end is never
  within a finite R.

Why *start* for before/after: a fact is placed on the timeline by when it began. At year granularity
consecutive spells meet (Juventus 1990–1995, AC Milan 1995–1997): "the team before AC Milan" must be
Juventus, which an *ends-before* rule (``end.last_day < r0``) would reject because both share 1995. For point
events (ICEWS, MultiTQ: ``start == end``) start and end coincide and every reading agrees.

Ordering (:class:`Extreme`): ``first`` is the earliest start day, ``last`` the latest start day, ties kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import TypeVar

from ..errors import ConfigError
from .interval import NEG_INF, POS_INF, Interval, TimeLike, span_of
from .point import TimePoint

T = TypeVar("T")


E = TypeVar("E", bound=StrEnum)


def parse_choice(cls: type[E], value: object, what: str) -> E:
    """``value`` as a member of the closed choice ``cls`` (case and surrounding spaces ignored); ConfigError
    naming ``what`` and listing the valid values otherwise. Used for every enum read from outside input."""
    if isinstance(value, cls):
        return value
    try:
        return cls(str(value).strip().lower())
    except ValueError:
        valid = ", ".join(m.value for m in cls)
        raise ConfigError(f"{what}: unknown value {value!r}; use one of: {valid}") from None


class TemporalRelation(StrEnum):
    """How a fact's time must relate to a reference time (see the module table)."""

    IN = "in"
    BEFORE = "before"
    AFTER = "after"
    SINCE = "since"
    STARTS = "starts"
    ENDS = "ends"
    WITHIN = "within"

    @classmethod
    def parse(cls, value: str | TemporalRelation) -> TemporalRelation:
        """The relation named ``value``; ConfigError listing the valid names otherwise."""
        return parse_choice(cls, value, "temporal relation")


class Extreme(StrEnum):
    """Which end of a time-ordered list: the earliest (``first``) or latest (``last``) start."""

    FIRST = "first"
    LAST = "last"

    @classmethod
    def parse(cls, value: str | Extreme) -> Extreme:
        return parse_choice(cls, value, "order")


def holds(
    relation: TemporalRelation, start: TimePoint | None, end: TimePoint | None, reference: TimeLike
) -> bool:
    """Whether a fact running from ``start`` to ``end`` (``None``: open end) stands in ``relation`` to
    ``reference``. The single implementation of the table in the module docstring."""
    r0, r1 = span_of(reference)
    return holds_span(relation, start, end, r0, r1)


Predicate = Callable[[TimePoint | None, TimePoint | None, int, int], bool]


def _in(s: TimePoint | None, e: TimePoint | None, r0: int, r1: int) -> bool:
    if s is None:
        return e is not None and e.last_day >= r0
    return s.first_day <= r1 and (e is None or e.last_day >= r0)


def _before(s: TimePoint | None, e: TimePoint | None, r0: int, r1: int) -> bool:
    return s.last_day < r0 if s is not None else e is not None  # an open start began at −∞


def _after(s: TimePoint | None, e: TimePoint | None, r0: int, r1: int) -> bool:
    return s is not None and s.first_day > r1


def _since(s: TimePoint | None, e: TimePoint | None, r0: int, r1: int) -> bool:
    if e is None:
        return s is not None
    return e.last_day >= r0


def _starts(s: TimePoint | None, e: TimePoint | None, r0: int, r1: int) -> bool:
    return s is not None and s.first_day <= r1 and s.last_day >= r0


def _ends(s: TimePoint | None, e: TimePoint | None, r0: int, r1: int) -> bool:
    return e is not None and e.first_day <= r1 and e.last_day >= r0


def _within(s: TimePoint | None, e: TimePoint | None, r0: int, r1: int) -> bool:
    return e is not None and (s.first_day if s is not None else NEG_INF) >= r0 and e.last_day <= r1


_PREDICATES: dict[TemporalRelation, Predicate] = {
    TemporalRelation.IN: _in,
    TemporalRelation.BEFORE: _before,
    TemporalRelation.AFTER: _after,
    TemporalRelation.SINCE: _since,
    TemporalRelation.STARTS: _starts,
    TemporalRelation.ENDS: _ends,
    TemporalRelation.WITHIN: _within,
}
assert set(_PREDICATES) == set(TemporalRelation), "every relation needs its predicate"


def predicate(relation: TemporalRelation) -> Predicate:
    """``(start, end, r0, r1) -> bool`` for ``relation``: the single implementation of the table above,
    looked up once so hot loops (the store's operators, the executor) call one small function per fact."""
    return _PREDICATES[relation]


def holds_span(
    relation: TemporalRelation, start: TimePoint | None, end: TimePoint | None, r0: int, r1: int
) -> bool:
    """:func:`holds` against a reference given as its day span ``[r0, r1]``."""
    return _PREDICATES[relation](start, end, r0, r1)


def keep(
    items: Iterable[T],
    relation: TemporalRelation,
    reference: TimeLike,
    times: Callable[[T], tuple[TimePoint | None, TimePoint | None]],
) -> list[T]:
    """The items whose ``(start, end)`` (read by ``times``) stand in ``relation`` to ``reference``."""
    r0, r1 = span_of(reference)
    test = _PREDICATES[relation]
    return [it for it in items if test(*times(it), r0, r1)]


def search_window(relation: TemporalRelation, reference: TimeLike) -> Interval | None:
    """A time window that every fact satisfying ``relation`` shares a day with (a superset filter a store's
    time index can apply first: :meth:`~tkgqa.kg.KGStore.facts` keeps facts sharing a day with ``time``,
    open ends unbounded, as here); ``None`` when no finite window helps."""
    r0, r1 = span_of(reference)
    if relation is TemporalRelation.BEFORE:
        return Interval(None, TimePoint.from_ordinal(r0 - 1)) if r0 > NEG_INF else None
    if relation is TemporalRelation.AFTER:
        return Interval(TimePoint.from_ordinal(r1 + 1), None) if r1 < POS_INF else None
    if relation is TemporalRelation.SINCE:
        return Interval(TimePoint.from_ordinal(r0), None) if r0 > NEG_INF else None
    if r0 <= NEG_INF or r1 >= POS_INF:
        return None
    return Interval(TimePoint.from_ordinal(r0), TimePoint.from_ordinal(r1))


def start_day(start: TimePoint | None) -> int | None:
    """The sort key of a fact on the timeline: its start's first day (``None`` when undated)."""
    return start.first_day if start is not None else None


def extreme(items: Iterable[T], which: Extreme, key: Callable[[T], TimePoint | None], n: int = 1) -> list[T]:
    """The items at the ``n``-th earliest (``first``) or latest (``last``) distinct start day (ties kept);
    undated items never qualify; ``[]`` when there are fewer than ``n`` distinct days."""
    if n == 1:  # one pass: this runs on every first/last question
        best: int | None = None
        out: list[T] = []
        latest = which is Extreme.LAST
        for it in items:
            k = key(it)
            if k is None:
                continue
            day = k.first_day
            if best is None or (day > best if latest else day < best):
                best, out = day, [it]
            elif day == best:
                out.append(it)
        return out
    dated = [(it, k.first_day) for it in items if (k := key(it)) is not None]
    if not dated or n < 1:
        return []
    days = sorted({d for _, d in dated}, reverse=which is Extreme.LAST)
    if n > len(days):
        return []
    day = days[n - 1]
    return [it for it, d in dated if d == day]
