"""Temporal relations: granularity-aware comparisons and Allen's interval algebra over day spans."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from tkgqa.time import (
    NEG_INF,
    POS_INF,
    AllenRelation,
    Granularity,
    Interval,
    TimeLike,
    TimePoint,
    allen,
    distance_days,
    follows,
    intersects,
    precedes,
    same_at,
    span_of,
    within,
)

BASE = TimePoint(2015, 3, 1).first_day


def day(offset: int) -> TimePoint:
    return TimePoint.from_ordinal(BASE + offset)


def interval(a: int, b: int) -> Interval:
    return Interval(day(a), day(b))


@st.composite
def time_likes(draw: st.DrawFn) -> TimeLike:
    """Points at any granularity and intervals (some open) around 2014-2016."""
    year = draw(st.integers(2013, 2016))
    month = draw(st.integers(1, 12))
    dom = draw(st.integers(1, 28))
    choices = [TimePoint(year), TimePoint(year, month), TimePoint(year, month, dom)]
    kind = draw(st.sampled_from(["point", "interval", "open_end", "open_start"]))
    p = draw(st.sampled_from(choices))
    if kind == "point":
        return p
    length = draw(st.integers(0, 900))
    q = TimePoint.from_ordinal(span_of(p)[1] + length)
    if kind == "interval":
        return Interval(p, q)
    return Interval(p, None) if kind == "open_end" else Interval(None, q)


# --- granularity ------------------------------------------------------------------------------------------
def test_a_day_is_in_its_month_and_year() -> None:
    d, m, y = TimePoint(2015, 3, 21), TimePoint(2015, 3), TimePoint(2015)
    assert within(d, m) and within(d, y) and within(m, y)
    assert not within(m, d) and not within(y, m)
    assert not precedes(d, y) and not follows(d, y) and intersects(d, y)
    assert precedes(TimePoint(2014, 12, 31), y) and follows(TimePoint(2016, 1, 1), y)
    assert not precedes(TimePoint(2015, 1, 1), y)


@given(time_likes())
def test_before_a_year_means_before_its_first_day(t: TimeLike) -> None:
    assert (
        precedes(t, TimePoint(2015)) == precedes(t, TimePoint(2015, 1, 1)) == precedes(t, TimePoint(2015, 1))
    )
    assert (
        follows(t, TimePoint(2015)) == follows(t, TimePoint(2015, 12, 31)) == follows(t, TimePoint(2015, 12))
    )


def test_same_at() -> None:
    a, b = TimePoint(2015, 3, 21), TimePoint(2015, 3, 2)
    assert same_at(a, b, Granularity.MONTH) and same_at(a, b, Granularity.YEAR)
    assert not same_at(a, b, Granularity.DAY)
    assert not same_at(a, TimePoint(2015, 4, 21), Granularity.MONTH)


def test_distance_days() -> None:
    assert distance_days(TimePoint(2015, 3, 21), TimePoint(2015, 3)) == 0
    assert distance_days(TimePoint(2015, 3, 21), TimePoint(2015, 3, 25)) == 4
    assert distance_days(TimePoint(2015, 3, 25), TimePoint(2015, 3, 21)) == 4
    assert distance_days(TimePoint(2014), TimePoint(2015, 1, 2)) == 2
    assert distance_days(Interval(None, TimePoint(2014)), TimePoint(2015)) == 1
    assert distance_days(Interval(TimePoint(2016), None), TimePoint(2015)) == 1


def test_open_ends_are_infinite() -> None:
    assert span_of(Interval(None, None)) == (NEG_INF, POS_INF)
    forever = Interval(TimePoint(1990), None)
    assert intersects(forever, TimePoint(2500)) and not precedes(forever, TimePoint(2500))
    assert precedes(Interval(None, TimePoint(1990)), TimePoint(1991))


@given(time_likes(), time_likes())
def test_before_after_antisymmetry(a: TimeLike, b: TimeLike) -> None:
    assert not (precedes(a, b) and precedes(b, a))
    assert precedes(a, b) == follows(b, a)
    assert precedes(a, b) + follows(a, b) + intersects(a, b) == 1
    assert intersects(a, b) == intersects(b, a) == (distance_days(a, b) == 0)
    if within(a, b) and within(b, a):
        assert span_of(a) == span_of(b)


# --- Allen ----------------------------------------------------------------------------------------------
# Allen's definitions over closed day spans, where "meets" is adjacency (b starts the day after a ends).
Pred = Callable[[int, int, int, int], bool]
DEFINITIONS: dict[AllenRelation, Pred] = {
    AllenRelation.BEFORE: lambda a0, a1, b0, b1: a1 + 1 < b0,
    AllenRelation.MEETS: lambda a0, a1, b0, b1: a1 + 1 == b0,
    AllenRelation.OVERLAPS: lambda a0, a1, b0, b1: a0 < b0 <= a1 < b1,
    AllenRelation.STARTS: lambda a0, a1, b0, b1: a0 == b0 and a1 < b1,
    AllenRelation.DURING: lambda a0, a1, b0, b1: b0 < a0 and a1 < b1,
    AllenRelation.FINISHES: lambda a0, a1, b0, b1: b0 < a0 and a1 == b1,
    AllenRelation.EQUALS: lambda a0, a1, b0, b1: a0 == b0 and a1 == b1,
}


def _swapped(pred: Pred) -> Pred:
    return lambda a0, a1, b0, b1: pred(b0, b1, a0, a1)


for _rel in list(DEFINITIONS):
    if _rel != AllenRelation.EQUALS:
        DEFINITIONS[_rel.inverse] = _swapped(DEFINITIONS[_rel])

SPANS = [(a, b) for a in range(7) for b in range(a, 7)]


def test_thirteen_relations() -> None:
    assert len(AllenRelation) == 13 == len(DEFINITIONS)
    assert {r.inverse.inverse for r in AllenRelation} == set(AllenRelation)
    assert AllenRelation.EQUALS.inverse == AllenRelation.EQUALS


def test_allen_exhaustive_small_spans() -> None:
    """All 784 pairs of day spans within a week: exactly one relation holds, it is allen's, and swapping
    the arguments gives its inverse."""
    for a, b in itertools.product(SPANS, SPANS):
        holding = [r for r, pred in DEFINITIONS.items() if pred(a[0], a[1], b[0], b[1])]
        assert len(holding) == 1, (a, b, holding)
        ia, ib = interval(*a), interval(*b)
        assert allen(ia, ib) == holding[0], (a, b)
        assert allen(ib, ia) == holding[0].inverse, (a, b)


def test_every_relation_occurs_in_the_exhaustive_grid() -> None:
    seen = {allen(interval(*a), interval(*b)) for a in SPANS for b in SPANS}
    assert seen == set(AllenRelation)


@given(time_likes(), time_likes())
def test_allen_properties(a: TimeLike, b: TimeLike) -> None:
    rel = allen(a, b)
    assert allen(b, a) == rel.inverse
    (a0, a1), (b0, b1) = span_of(a), span_of(b)
    assert [r for r, pred in DEFINITIONS.items() if pred(a0, a1, b0, b1)] == [rel]
    if rel in {AllenRelation.BEFORE, AllenRelation.MEETS}:
        assert precedes(a, b)
    if rel in {AllenRelation.DURING, AllenRelation.STARTS, AllenRelation.FINISHES, AllenRelation.EQUALS}:
        assert within(a, b)


def test_allen_with_granularity() -> None:
    assert allen(TimePoint(2015, 3, 21), TimePoint(2015, 3)) == AllenRelation.DURING
    assert allen(TimePoint(2015, 3, 1), TimePoint(2015, 3)) == AllenRelation.STARTS
    assert allen(TimePoint(2015, 3), TimePoint(2015)) == AllenRelation.DURING
    assert allen(TimePoint(2015, 12), TimePoint(2015)) == AllenRelation.FINISHES
    assert allen(TimePoint(2014), TimePoint(2015)) == AllenRelation.MEETS
    assert allen(TimePoint(2013), TimePoint(2015)) == AllenRelation.BEFORE
    assert (
        allen(TimePoint(2015), Interval(TimePoint(2015, 1, 1), TimePoint(2015, 12, 31)))
        == AllenRelation.EQUALS
    )
