"""``Interval`` and the temporal relations between times, as pure functions over day spans.

Every time is a closed span of days ``[first_day, last_day]``: a point covers its year/month/day, an interval
runs from its start's first day to its end's last day, and an open end extends to ±infinity.
Span comparisons honour granularity: ``precedes(2015-03-21, 2015)`` is False (the day lies *in* 2015),
``precedes(2014-12-31, 2015)`` is True. These compare two time *spans* (Allen order); how a *fact* relates to
a reference time in a question ("before 2015", "after X did") is defined once, in :mod:`.semantics`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..errors import DataError
from .point import Granularity, TimePoint, parse_bound, parse_time, split_range

NEG_INF = -(10**9)
POS_INF = 10**9

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Interval:
    """A time interval with optional open ends; ``Interval(p, p)`` is the point ``p``."""

    start: TimePoint | None
    end: TimePoint | None

    def __post_init__(self) -> None:
        if self.start is not None and self.end is not None and self.start.first_day > self.end.last_day:
            raise DataError(f"interval start {self.start} is after its end {self.end}")

    @classmethod
    def point(cls, value: TimePoint | str | int) -> Interval:
        p = TimePoint.of(value)
        return cls(p, p)

    @classmethod
    def parse(cls, text: str) -> Interval:
        """``"1990-1995"``, ``"1990 to 1995"``, ``"2015-03"`` (a point) or ``"1990 - "`` (open end)."""
        ends = split_range(text)
        if ends is None:
            s = text.strip()
            if s.endswith(("-", "–")):
                return cls(parse_time(s[:-1]), None)
            return cls.point(parse_time(s))
        return cls(parse_bound(ends[0]), parse_bound(ends[1]))

    @property
    def first_day(self) -> int:
        return self.start.first_day if self.start is not None else NEG_INF

    @property
    def last_day(self) -> int:
        return self.end.last_day if self.end is not None else POS_INF

    @property
    def span(self) -> Span:
        return (self.first_day, self.last_day)

    @property
    def is_point(self) -> bool:
        return self.start is not None and self.start == self.end

    def duration_days(self) -> int | None:
        """Number of days covered, or ``None`` when an end is open."""
        if self.start is None or self.end is None:
            return None
        return self.last_day - self.first_day + 1

    def __str__(self) -> str:
        if self.is_point:
            return str(self.start)
        return f"{self.start or '…'}/{self.end or '…'}"


TimeLike = TimePoint | Interval


def span_of(t: TimeLike) -> Span:
    """The closed day span ``(first_day, last_day)`` of a point or interval."""
    if isinstance(t, TimePoint):
        return (t.first_day, t.last_day)
    return t.span


# --- point-style comparisons (granularity aware) ------------------------------------------------
def precedes(a: TimeLike, b: TimeLike) -> bool:
    """Span ``a`` ends strictly before span ``b`` starts (Allen *before* or *meets*). Not a fact filter:
    see :func:`tkgqa.time.semantics.holds`."""
    return span_of(a)[1] < span_of(b)[0]


def follows(a: TimeLike, b: TimeLike) -> bool:
    """Span ``a`` starts strictly after span ``b`` ends (Allen *after* or *met by*)."""
    return span_of(a)[0] > span_of(b)[1]


def within(a: TimeLike, b: TimeLike) -> bool:
    """Every day of ``a`` lies in ``b`` (``2015-03-21`` is *in* ``2015-03``)."""
    sa, sb = span_of(a), span_of(b)
    return sb[0] <= sa[0] and sa[1] <= sb[1]


def intersects(a: TimeLike, b: TimeLike) -> bool:
    """``a`` and ``b`` share at least one day."""
    sa, sb = span_of(a), span_of(b)
    return sa[0] <= sb[1] and sb[0] <= sa[1]


def same_at(a: TimePoint, b: TimePoint, granularity: Granularity) -> bool:
    """``a`` and ``b`` are equal once both are coarsened to ``granularity``."""
    return a.coarsen(granularity) == b.coarsen(granularity)


def distance_days(a: TimeLike, b: TimeLike) -> int:
    """Days between the two spans (0 if they share a day); open ends count as infinitely far."""
    sa, sb = span_of(a), span_of(b)
    if sa[0] <= sb[1] and sb[0] <= sa[1]:
        return 0
    return sb[0] - sa[1] if sa[1] < sb[0] else sa[0] - sb[1]


# --- Allen's interval algebra -------------------------------------------------------------------
class AllenRelation(StrEnum):
    BEFORE = "before"
    AFTER = "after"
    MEETS = "meets"
    MET_BY = "met_by"
    OVERLAPS = "overlaps"
    OVERLAPPED_BY = "overlapped_by"
    STARTS = "starts"
    STARTED_BY = "started_by"
    DURING = "during"
    CONTAINS = "contains"
    FINISHES = "finishes"
    FINISHED_BY = "finished_by"
    EQUALS = "equals"

    @property
    def inverse(self) -> AllenRelation:
        return _INVERSE[self]


_INVERSE = {
    AllenRelation.BEFORE: AllenRelation.AFTER,
    AllenRelation.MEETS: AllenRelation.MET_BY,
    AllenRelation.OVERLAPS: AllenRelation.OVERLAPPED_BY,
    AllenRelation.STARTS: AllenRelation.STARTED_BY,
    AllenRelation.DURING: AllenRelation.CONTAINS,
    AllenRelation.FINISHES: AllenRelation.FINISHED_BY,
    AllenRelation.EQUALS: AllenRelation.EQUALS,
}
_INVERSE.update({v: k for k, v in list(_INVERSE.items())})


def allen(a: TimeLike, b: TimeLike) -> AllenRelation:
    """Allen relation of ``a`` to ``b`` over closed day spans.

    "meets" means ``b`` starts the day after ``a`` ends (days are the atoms of time here)."""
    (a0, a1), (b0, b1) = span_of(a), span_of(b)
    if a1 + 1 < b0:
        return AllenRelation.BEFORE
    if b1 + 1 < a0:
        return AllenRelation.AFTER
    if a1 + 1 == b0:
        return AllenRelation.MEETS
    if b1 + 1 == a0:
        return AllenRelation.MET_BY
    if a0 == b0 and a1 == b1:
        return AllenRelation.EQUALS
    if a0 == b0:
        return AllenRelation.STARTS if a1 < b1 else AllenRelation.STARTED_BY
    if a1 == b1:
        return AllenRelation.FINISHES if a0 > b0 else AllenRelation.FINISHED_BY
    if b0 < a0 and a1 < b1:
        return AllenRelation.DURING
    if a0 < b0 and b1 < a1:
        return AllenRelation.CONTAINS
    return AllenRelation.OVERLAPS if a0 < b0 else AllenRelation.OVERLAPPED_BY
