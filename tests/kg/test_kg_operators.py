"""ARI operators with every granularity: year/month questions over day facts, interval and open facts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tkgqa.kg import (
    OPERATORS,
    Fact,
    TemporalKG,
    get_after,
    get_before,
    get_between,
    get_during,
    get_first,
    get_head_entity,
    get_last,
    get_tail_entity,
    get_time,
    other_entity,
)
from tkgqa.time import Interval, TimePoint

P = TimePoint.of


def day_fact(o: str, when: str, s: str = "Obama", r: str = "visit") -> Fact:
    return Fact(s, r, o, P(when), P(when))


VISITS = [
    day_fact("Japan", "2014-11-10"),
    day_fact("China", "2014-11-12"),
    day_fact("India", "2015-01-25"),
    day_fact("Cuba", "2015-03-20"),
    day_fact("Kenya", "2015-03-31"),
    day_fact("Germany", "2015-04-01"),
    day_fact("Cuba", "2016-03-20"),
]
TERMS = [
    Fact("Obama", "position", "Senator", P("2005-01-03"), P("2008-11-16")),
    Fact("Obama", "position", "President", P("2009-01-20"), P("2017-01-20")),
    Fact("Obama", "position", "Author", P("1995"), None),
    Fact("Obama", "position", "Lecturer", P("1992"), P("2004")),
]


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG([*VISITS, *TERMS, Fact("Cuba", "visit", "Obama", P("2016-03-21"), P("2016-03-21"))])


def objects(facts: list[Fact]) -> list[str]:
    return [f.object for f in facts]


def test_registry_lists_every_operator() -> None:
    assert set(OPERATORS) == {
        "get_tail_entity",
        "get_head_entity",
        "get_time",
        "get_before",
        "get_after",
        "get_between",
        "get_during",
        "get_first",
        "get_last",
    }


def test_entity_lookups(kg: TemporalKG) -> None:
    assert objects(get_tail_entity(kg, "Obama", "visit")) == [f.object for f in VISITS]
    assert objects(get_tail_entity(kg, "Obama", "visit", "2015")) == ["India", "Cuba", "Kenya", "Germany"]
    assert objects(get_tail_entity(kg, "Obama", "visit", "2015-03")) == ["Cuba", "Kenya"]
    assert objects(get_tail_entity(kg, "Obama", "visit", "Mar 2015")) == ["Cuba", "Kenya"]
    assert objects(get_tail_entity(kg, "Obama", "visit", P("2015-03-20"))) == ["Cuba"]
    assert [f.subject for f in get_head_entity(kg, "Cuba", "visit")] == ["Obama", "Obama"]
    assert [f.subject for f in get_head_entity(kg, "Cuba", "visit", "2016")] == ["Obama"]
    both = get_tail_entity(kg, "Cuba", "visit", both_directions=True)
    assert [(f.subject, f.object) for f in both] == [("Obama", "Cuba"), ("Obama", "Cuba"), ("Cuba", "Obama")]
    assert len(get_head_entity(kg, "Obama", "visit", both_directions=True)) == len(VISITS) + 1
    assert [f.start for f in get_time(kg, "Obama", "visit", "Cuba")] == [P("2015-03-20"), P("2016-03-20")]
    assert len(get_time(kg, "Cuba", "visit", "Obama", both_directions=True)) == 3
    assert other_entity(VISITS[0], "Obama") == "Japan" and other_entity(VISITS[0], "Japan") == "Obama"


def test_interval_facts_match_times_inside(kg: TemporalKG) -> None:
    assert objects(get_tail_entity(kg, "Obama", "position", "2010")) == ["Author", "President"]
    assert objects(get_tail_entity(kg, "Obama", "position", "2008-12")) == ["Author"]
    assert objects(get_tail_entity(kg, "Obama", "position", "2004-06-01")) == ["Lecturer", "Author"]
    assert objects(get_tail_entity(kg, "Obama", "position", "1993")) == ["Lecturer"]


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        ("2015", ["Japan", "China"]),
        ("2015-01", ["Japan", "China"]),
        ("2015-01-25", ["Japan", "China"]),
        ("2015-01-26", ["Japan", "China", "India"]),
        ("2015-03", ["Japan", "China", "India"]),
        ("Apr 2015", ["Japan", "China", "India", "Cuba", "Kenya"]),
        ("2014", []),
    ],
)
def test_get_before(t: str, expected: list[str]) -> None:
    assert objects(get_before(VISITS, t)) == expected


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        ("2015", ["Cuba"]),
        ("2015-03", ["Germany", "Cuba"]),
        ("2015-03-31", ["Germany", "Cuba"]),
        ("2015-03-30", ["Kenya", "Germany", "Cuba"]),
        ("2014-11", ["India", "Cuba", "Kenya", "Germany", "Cuba"]),
        ("2016", []),
    ],
)
def test_get_after(t: str, expected: list[str]) -> None:
    assert objects(get_after(VISITS, t)) == expected


def test_between_and_during() -> None:
    assert objects(get_between(VISITS, "2015-01", "2015-03")) == ["India", "Cuba", "Kenya"]
    assert objects(get_between(VISITS, "2014", "2015")) == [f.object for f in VISITS[:6]]
    assert objects(get_between(VISITS, "2015-03-20", "2015-03-31")) == ["Cuba", "Kenya"]
    assert objects(get_during(VISITS, "2015-03")) == ["Cuba", "Kenya"]
    assert objects(get_during(VISITS, Interval.parse("2014-2015"))) == [f.object for f in VISITS[:6]]


def test_interval_facts_in_temporal_filters() -> None:
    assert objects(get_before(TERMS, "2009")) == ["Senator", "Author", "Lecturer"]  # open end: by its start
    # before = starts before (tkgqa.time.semantics): the 1992–2004 lectureship began before 1996
    assert objects(get_before(TERMS, "1996")) == ["Author", "Lecturer"]
    assert objects(get_before(TERMS, "1992")) == []
    assert objects(get_after(TERMS, "2008")) == ["President"]
    assert objects(get_between(TERMS, "2000", "2010")) == ["Senator"]
    # within: an open end (still an author) is never wholly inside a finite range
    assert objects(get_between(TERMS, "1990", "2020")) == ["Senator", "President", "Lecturer"]
    assert objects(get_during(TERMS, "2012")) == ["President", "Author"]  # open end runs on
    assert objects(get_during(TERMS, "2006")) == ["Senator", "Author"]


def test_first_and_last_keep_ties() -> None:
    assert objects(get_first(VISITS)) == ["Japan"]
    assert objects(get_last(VISITS)) == ["Cuba"]
    tied = [day_fact("X", "2015-03"), day_fact("Y", "2015-03-01"), day_fact("Z", "2015-03-02")]
    assert objects(get_first(tied)) == ["X", "Y"]  # same first day
    assert objects(get_last(tied)) == ["Z"]
    assert get_first([]) == [] and get_last([Fact("a", "r", "b")]) == []
    assert objects(get_first(TERMS)) == ["Lecturer"] and objects(get_last(TERMS)) == ["President"]


def test_undated_facts_are_ignored_by_filters() -> None:
    undated = [Fact("a", "r", "b"), *VISITS[:1]]
    assert get_before(undated, "2020") == VISITS[:1]
    assert get_after(undated, "2000") == VISITS[:1]
    assert get_between(undated, "2000", "2020") == VISITS[:1]
    assert get_during(undated, "2014") == VISITS[:1]


def test_chaining_over_the_store(kg: TemporalKG) -> None:
    """'Who did Obama visit first after March 2015?'"""
    assert objects(get_first(get_after(get_tail_entity(kg, "Obama", "visit"), "Mar 2015"))) == ["Germany"]
    assert objects(get_last(get_before(get_tail_entity(kg, "Obama", "visit"), "2015"))) == ["China"]


@given(st.integers(0, 800), st.sampled_from(["year", "month", "day"]))
def test_filters_agree_with_iso_string_comparison(offset: int, level: str) -> None:
    """Over day facts, before/after at any granularity equal comparing ISO strings with prefix semantics."""
    t = TimePoint.from_ordinal(P("2014-06-01").first_day + offset)
    text = {"year": t.iso()[:4], "month": t.iso()[:7], "day": t.iso()}[level]
    iso = {f.object + str(f.start): f.start.iso() for f in VISITS if f.start}
    assert [f.start.iso() for f in get_before(VISITS, text) if f.start] == [
        d for d in iso.values() if d < text
    ]
    assert [f.start.iso() for f in get_after(VISITS, text) if f.start] == [
        d for d in iso.values() if d[: len(text)] > text
    ]
    assert [f.start.iso() for f in get_during(VISITS, text) if f.start] == [
        d for d in iso.values() if d.startswith(text)
    ]
