"""``Fact.of``: a fact with its times written as people write them, read by ``TimePoint.of``."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tkgqa.errors import DataError
from tkgqa.kg import Fact
from tkgqa.time import TimePoint


def test_one_time_makes_a_point_event() -> None:
    f = Fact.of("Barack_Obama", "Make_a_visit", "China", "2014-11-10")
    assert f == Fact(
        "Barack_Obama", "Make_a_visit", "China", TimePoint(2014, 11, 10), TimePoint(2014, 11, 10)
    )
    assert f.is_point


def test_two_times_make_an_interval_and_none_an_open_end() -> None:
    spell = Fact.of("Roberto_Baggio", "member_of_sports_team", "Juventus", 1990, 1995)
    assert (spell.start, spell.end) == (TimePoint(1990), TimePoint(1995))
    assert not spell.is_point
    ongoing = Fact.of("Angela_Merkel", "head_of_government", "Germany", "2005-11", None)
    assert (ongoing.start, ongoing.end) == (TimePoint(2005, 11), None)
    assert Fact.of("a", "r", "b") == Fact("a", "r", "b", None, None)


def test_every_form_of_time_point_of_is_taken() -> None:
    given_forms = [TimePoint(2014, 11, 10), date(2014, 11, 10), "2014-11-10", "10 November 2014"]
    assert {Fact.of("a", "r", "b", t).start for t in given_forms} == {TimePoint(2014, 11, 10)}


@pytest.mark.parametrize("bad", ["someday", 2.5, True, 10**9])
def test_a_time_that_cannot_be_read_is_a_data_error_showing_the_forms(bad: object) -> None:
    with pytest.raises(DataError, match="2015-03"):
        Fact.of("a", "r", "b", bad)  # type: ignore[arg-type]
    with pytest.raises(DataError, match="2015-03"):
        Fact.of("a", "r", "b", 2014, bad)  # type: ignore[arg-type]


@given(st.dates(), st.dates() | st.none())
def test_of_equals_the_fact_built_from_time_points(start: date, end: date | None) -> None:
    f = Fact.of("a", "r", "b", start.isoformat(), end)
    assert f == Fact("a", "r", "b", TimePoint.of(start), None if end is None else TimePoint.of(end))
    assert Fact.from_dict(f.to_dict()) == f  # what Fact.of builds survives the JSON boundary
