"""TimePoint, day ordinals and parsing of every benchmark time notation."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tkgqa.errors import DataError
from tkgqa.time import (
    Granularity,
    Interval,
    TimePoint,
    civil_from_days,
    days_from_civil,
    days_in_month,
    parse_bound,
    parse_time,
    split_range,
    try_parse_time,
)

dates = st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31))


@st.composite
def points(draw: st.DrawFn, min_year: int = 1000, max_year: int = 2999) -> TimePoint:
    year = draw(st.integers(min_year, max_year))
    gran = draw(st.sampled_from(list(Granularity)))
    if gran == Granularity.YEAR:
        return TimePoint(year)
    month = draw(st.integers(1, 12))
    if gran == Granularity.MONTH:
        return TimePoint(year, month)
    return TimePoint(year, month, draw(st.integers(1, days_in_month(year, month))))


# --- day ordinals ------------------------------------------------------------------------------------
@given(dates)
def test_days_from_civil_matches_datetime(d: date) -> None:
    assert days_from_civil(d.year, d.month, d.day) == d.toordinal()
    assert civil_from_days(d.toordinal()) == (d.year, d.month, d.day)


@given(st.integers(-3_000_000, 4_000_000))
def test_civil_from_days_inverts_days_from_civil_beyond_datetime(ordinal: int) -> None:
    y, m, d = civil_from_days(ordinal)
    assert 1 <= m <= 12 and 1 <= d <= days_in_month(y, m)
    assert days_from_civil(y, m, d) == ordinal


@given(dates)
def test_point_spans_match_datetime(d: date) -> None:
    day, month, year = TimePoint(d.year, d.month, d.day), TimePoint(d.year, d.month), TimePoint(d.year)
    assert day.first_day == day.last_day == d.toordinal()
    assert month.first_day == d.replace(day=1).toordinal()
    next_month = (
        date(d.year + (d.month == 12), d.month % 12 + 1, 1) if d.year < 9999 or d.month < 12 else None
    )
    if next_month is not None:
        assert month.last_day == (next_month - timedelta(days=1)).toordinal()
    assert year.first_day == date(d.year, 1, 1).toordinal()
    assert year.last_day == date(d.year, 12, 31).toordinal()
    assert year.contains(month) and month.contains(day) and year.contains(day)
    assert not day.contains(month)


def test_leap_years() -> None:
    assert TimePoint(2016, 2).last_day - TimePoint(2016, 2).first_day == 28
    assert TimePoint(1900, 2).last_day - TimePoint(1900, 2).first_day == 27
    assert TimePoint(2000, 2, 29).first_day == date(2000, 2, 29).toordinal()
    with pytest.raises(DataError):
        TimePoint(2015, 2, 29)


def test_invalid_points() -> None:
    with pytest.raises(DataError, match="month"):
        TimePoint(2015, 13)
    with pytest.raises(DataError, match="needs a month"):
        TimePoint(2015, None, 3)
    with pytest.raises(DataError, match="out of range"):
        TimePoint(2015, 4, 31)


def test_bce_years() -> None:
    p = TimePoint(-44, 3, 15)
    assert p.iso() == "-0044-03-15"
    assert parse_time("-0044-03-15") == p
    assert TimePoint(-44) < TimePoint(1)


# --- ordering, coarsening ------------------------------------------------------------------------------
@given(points(), points())
def test_ordering_is_total_and_consistent(a: TimePoint, b: TimePoint) -> None:
    assert (a < b) + (b < a) + (a == b) == 1
    assert (a == b) == (hash(a) == hash(b)) or a != b
    if a.first_day < b.first_day:
        assert a < b


def test_coarser_sorts_before_finer_on_the_same_first_day() -> None:
    assert TimePoint(2015) < TimePoint(2015, 1) < TimePoint(2015, 1, 1) < TimePoint(2015, 1, 2)


@given(points())
def test_coarsen(p: TimePoint) -> None:
    year = p.coarsen(Granularity.YEAR)
    assert year.granularity == Granularity.YEAR and year.contains(p)
    month = p.coarsen(Granularity.MONTH)
    assert month.contains(p)
    assert p.coarsen(Granularity.DAY) == p


def test_granularity_parse() -> None:
    assert Granularity.parse("month") == Granularity.MONTH
    assert Granularity.parse(None) is None
    with pytest.raises(DataError, match="granularity"):
        Granularity.parse("week")


# --- parsing -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2015", TimePoint(2015)),
        ("2015-03", TimePoint(2015, 3)),
        ("2015-03-21", TimePoint(2015, 3, 21)),
        ("2015/03/21", TimePoint(2015, 3, 21)),
        ("Mar 2015", TimePoint(2015, 3)),
        ("March, 2015", TimePoint(2015, 3)),
        ("march 2015", TimePoint(2015, 3)),
        ("Sept. 2015", TimePoint(2015, 9)),
        ("Jun 25th, 2006", TimePoint(2006, 6, 25)),
        ("June 25, 2006", TimePoint(2006, 6, 25)),
        ("In Dec, 2008", TimePoint(2008, 12)),
        ("in December 2008", TimePoint(2008, 12)),
        ("25 June 2006", TimePoint(2006, 6, 25)),
        ("25th of June 2006", TimePoint(2006, 6, 25)),
        ("1994-03-01T00:00:00Z", TimePoint(1994, 3, 1)),
        ("+1994-03-01T00:00:00Z", TimePoint(1994, 3, 1)),
        ("on 2015-03-21.", TimePoint(2015, 3, 21)),
        ("in the year 2015", TimePoint(2015)),
        ("  2015  ", TimePoint(2015)),
    ],
)
def test_parse_every_benchmark_format(text: str, expected: TimePoint) -> None:
    assert parse_time(text) == expected
    assert parse_time(text).granularity == expected.granularity


@pytest.mark.parametrize(
    "text", ["", "foo", "2015-13", "2015-02-30", "Smarch 2015", "32 June 2006", "20150321"]
)
def test_unparseable_times(text: str) -> None:
    assert try_parse_time(text) is None
    with pytest.raises(DataError, match="cannot parse time"):
        parse_time(text)


@given(points(min_year=1000, max_year=9999))
def test_iso_round_trip(p: TimePoint) -> None:
    assert parse_time(p.iso()) == p
    assert TimePoint.of(p.iso()) == p


@given(dates.filter(lambda d: d.year >= 1000))
def test_parse_natural_language_dates(d: date) -> None:
    month = d.strftime("%B")
    expected = TimePoint(d.year, d.month, d.day)
    assert parse_time(f"{month} {d.day}, {d.year}") == expected
    assert parse_time(f"{d.day} {month} {d.year}") == expected
    assert parse_time(f"{month[:3]} {d.day}th, {d.year}") == expected
    assert parse_time(f"In {month[:3]}, {d.year}") == TimePoint(d.year, d.month)


def test_time_point_of() -> None:
    assert TimePoint.of(date(2015, 3, 21)) == TimePoint(2015, 3, 21)
    assert TimePoint.of(2015) == TimePoint(2015)
    assert TimePoint.of("Mar 2015") == TimePoint(2015, 3)
    assert TimePoint.from_ordinal(date(2015, 3, 21).toordinal()) == TimePoint(2015, 3, 21)


# --- bounds and intervals ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text", ["", " ", "1", "2916", "0001", "0001-01-01", "2916-01-01", None, "None", "nan", "-"]
)
def test_open_markers(text: str | None) -> None:
    assert parse_bound(text) is None


def test_bounds_that_are_times() -> None:
    assert parse_bound("1999") == TimePoint(1999)
    assert parse_bound("2916-05") == TimePoint(2916, 5)  # only the bare marker year is open
    with pytest.raises(DataError):
        parse_bound("soon")


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("1990-1995", TimePoint(1990), TimePoint(1995)),
        ("1990–1995", TimePoint(1990), TimePoint(1995)),
        ("1990 to 1995", TimePoint(1990), TimePoint(1995)),
        ("1990 until 1995", TimePoint(1990), TimePoint(1995)),
        ("Mar 2015 - Jun 2016", TimePoint(2015, 3), TimePoint(2016, 6)),
        ("1990 - ", TimePoint(1990), None),
        ("1990-2916", TimePoint(1990), None),
        ("2015-03", TimePoint(2015, 3), TimePoint(2015, 3)),
    ],
)
def test_interval_parse(text: str, start: TimePoint | None, end: TimePoint | None) -> None:
    interval = Interval.parse(text)
    assert (interval.start, interval.end) == (start, end)


def test_split_range_leaves_single_times_alone() -> None:
    assert split_range("2015-03") is None
    assert split_range("2015-03-21") is None
    assert split_range("1990-1995") == ("1990", "1995")


def test_interval_properties() -> None:
    iv = Interval(TimePoint(1990), TimePoint(1995))
    assert iv.duration_days() == date(1995, 12, 31).toordinal() - date(1990, 1, 1).toordinal() + 1
    assert not iv.is_point and Interval.point("2015").is_point
    assert Interval(TimePoint(1990), None).duration_days() is None
    assert str(Interval(None, TimePoint(1995))) == "…/1995"
    with pytest.raises(DataError, match="after its end"):
        Interval(TimePoint(1996), TimePoint(1995))
    # A start inside the end's span is fine: 2015-03 .. 2015.
    assert Interval(TimePoint(2015, 3), TimePoint(2015)).span == (
        TimePoint(2015, 3).first_day,
        TimePoint(2015).last_day,
    )


def _next_day(y: int, m: int, d: int) -> tuple[int, int, int]:
    if d < days_in_month(y, m):
        return (y, m, d + 1)
    return (y, m + 1, 1) if m < 12 else (y + 1, 1, 1)


@given(st.integers(-3_000_000, 4_000_000))
def test_consecutive_ordinals_are_consecutive_days(ordinal: int) -> None:
    """Also for years <= 0 (proleptic Gregorian with a year 0), where datetime cannot check."""
    assert civil_from_days(ordinal + 1) == _next_day(*civil_from_days(ordinal))


def test_year_zero_boundaries() -> None:
    assert days_from_civil(1, 1, 1) == 1
    assert days_from_civil(0, 12, 31) == 0
    assert days_from_civil(0, 3, 1) - days_from_civil(0, 2, 28) == 2  # year 0 is a leap year
    assert days_from_civil(-400, 3, 1) - days_from_civil(-400, 2, 28) == 2
    assert days_from_civil(-100, 3, 1) - days_from_civil(-100, 2, 28) == 1


def test_one_month_table() -> None:
    from tkgqa.time import MONTH_NAMES, MONTH_PATTERN, MONTHS, try_parse_time

    assert len(MONTH_NAMES) == 12
    for n, name in enumerate(MONTH_NAMES, 1):
        assert MONTHS[name.lower()] == MONTHS[name.lower()[:3]] == n
        assert try_parse_time(f"3 {name} 2014") == TimePoint(2014, n, 3)
    assert MONTHS["sept"] == 9
    assert all(re.fullmatch(MONTH_PATTERN, word) for word in MONTHS)
