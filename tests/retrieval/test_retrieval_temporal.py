from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from retrieval_helpers import day, point_fact

from tkgqa.errors import ConfigError
from tkgqa.kg import Fact
from tkgqa.retrieval import PAPER_PENALTY, TimeConstraint, fuse, parse_time_constraint, phi_t, time_scores
from tkgqa.retrieval.temporal import Proximity
from tkgqa.time import Interval, TimePoint


def days_from(base: str, offsets: list[int]) -> list[TimePoint]:
    return [TimePoint.from_ordinal(day(base).first_day + o) for o in offsets]


def test_before_is_equation_9() -> None:
    c = TimeConstraint("before", day("2015-01-10"))
    times = days_from("2015-01-10", [-1, -5, -9, 0, 3])  # gaps 1, 5, 9; same day; after
    scores = time_scores(c, times)
    assert scores[:3] == pytest.approx([1 - 1 / 9, 1 - 5 / 9, 0.0])
    assert scores[3] == PAPER_PENALTY and scores[4] == PAPER_PENALTY
    assert phi_t(c, times[1], scale_days=9) == pytest.approx(1 - 5 / 9)


def test_after_mirrors_before() -> None:
    c = TimeConstraint("after", day("2015-01-10"))
    times = days_from("2015-01-10", [2, 4, -3])
    scores = time_scores(c, times)
    assert scores[0] == pytest.approx(0.5) and scores[1] == pytest.approx(0.0)
    assert scores[2] == PAPER_PENALTY


def test_proximity_keeps_the_filter_and_ranks_by_nearness_only_for_first_last() -> None:
    c = TimeConstraint("after", day("2015-01-10"))
    times = days_from("2015-01-10", [2, 4, -3])
    assert list(time_scores(c, times, nearest=False)) == [1.0, 1.0, PAPER_PENALTY]  # Eq. 9's filter alone
    assert Proximity.ORDINAL.nearest("After 2015-01-10, who was the first to visit Iraq?")
    assert Proximity.ORDINAL.nearest("Who last visited Iraq before 2015?")
    assert not Proximity.ORDINAL.nearest("Who visited Iraq after 2015?")  # every fact after 2015 answers
    assert Proximity.PAPER.nearest("Who visited Iraq after 2015?")  # Eq. 9 for every question


def test_granularity_before_a_year_means_before_its_first_day() -> None:
    c = TimeConstraint.of("before", "2015")
    s = time_scores(c, [day("2015-03-21"), day("2014-12-31")], horizon_days=365)
    assert s[0] == PAPER_PENALTY
    assert s[1] == pytest.approx(1 - 1 / 365)


def test_equal_inside_is_one_and_decays_outside() -> None:
    c = TimeConstraint.of("in", "2014-05")
    times = [day("2014-05-20"), day("2014-06-05"), day("2014-07-01"), day("2013-01-01")]
    s = time_scores(c, times)
    assert s[0] == 1.0
    assert 1.0 > s[1] > s[2] > s[3] == 0.0
    assert np.all(s >= 0)  # equal never applies the penalty
    assert str(TimeConstraint.of("IN", "2014-05")) == "in 2014-05"  # one vocabulary: the relations


def test_interval_facts_overlapping_the_asked_time_count_as_inside() -> None:
    f = Fact("A", "held", "B", TimePoint(2009), TimePoint(2017))
    assert time_scores(TimeConstraint.of("in", "2012"), [f, day("2020-01-01")])[0] == 1.0
    # before/after follow tkgqa.time.semantics: the fact's start decides (2009 is before 2015)
    late = Fact("A", "held", "C", TimePoint(2016), TimePoint(2018))
    scores = time_scores(TimeConstraint.of("before", "2015"), [f, late])
    assert scores[0] != PAPER_PENALTY and scores[1] == PAPER_PENALTY
    assert time_scores(TimeConstraint.of("after", "2005"), [f])[0] == pytest.approx(0.0)
    assert time_scores(TimeConstraint.of("after", "2009"), [f])[0] == PAPER_PENALTY


def test_first_and_last_favour_earliest_and_latest() -> None:
    times = [day("2014-01-01"), day("2014-01-11"), day("2014-01-21")]
    first = time_scores(TimeConstraint("first"), times)
    last = time_scores(TimeConstraint("last"), times)
    assert first.tolist() == pytest.approx([1.0, 0.5, 0.0])
    assert last.tolist() == pytest.approx([0.0, 0.5, 1.0])
    ref = day("2014-01-01").first_day
    assert phi_t(TimeConstraint("first"), times[1], scale_days=20, reference_day=ref) == pytest.approx(0.5)


def test_timeless_facts_get_missing_and_no_constraint_gives_zeros() -> None:
    facts = [Fact("A", "r", "B"), point_fact("A", "r", "B", "2014-01-01")]
    assert time_scores(TimeConstraint.of("before", "2015"), facts)[0] == 0.0
    assert time_scores(TimeConstraint.of("before", "2015"), facts, missing=-1.0)[0] == -1.0
    assert time_scores(None, facts).tolist() == [0.0, 0.0]


@given(
    st.lists(st.integers(min_value=1, max_value=3000), min_size=2, max_size=30),
    st.sampled_from(["before", "after", "in"]),
)
def test_phi_t_is_monotone_non_increasing_in_distance(gaps: list[int], kind: str) -> None:
    anchor = day("2010-06-15")
    sign = -1 if kind == "before" else 1
    times = [TimePoint.from_ordinal(anchor.first_day + sign * g) for g in gaps]
    scores = time_scores(TimeConstraint.of(kind, anchor), times)
    order = np.argsort(gaps, kind="stable")
    assert np.all(np.diff(scores[order]) <= 1e-12)
    assert np.all((scores >= 0) & (scores <= 1))


def test_fuse_is_equation_10() -> None:
    assert fuse(0.8, 0.5) == pytest.approx(0.4 * 0.8 + 0.6 * 0.5)
    assert fuse(0.8, 0.5, mu=1.0) == pytest.approx(0.8)
    np.testing.assert_allclose(fuse(np.array([1.0, 0.0]), np.array([0.0, 1.0]), 0.25), [0.25, 0.75])
    with pytest.raises(ConfigError):
        fuse(0.1, 0.1, mu=1.5)


def test_constraint_validation() -> None:
    with pytest.raises(ConfigError):
        TimeConstraint("before")
    with pytest.raises(ConfigError):
        TimeConstraint("first", day("2015-01-01"))
    with pytest.raises(ConfigError):
        TimeConstraint.of("around", "2015")
    assert TimeConstraint.of("in", "1990-1995").time == Interval(TimePoint(1990), TimePoint(1995))
    with pytest.raises(ConfigError, match="unknown time constraint 'equal'"):
        TimeConstraint.of("equal", "2015")  # one vocabulary: "in", as the question-time reader says


def test_one_constraint_class_admits_by_the_one_semantics() -> None:
    from tkgqa.eval.support import question_times
    from tkgqa.time import TemporalRelation
    from tkgqa.time import TimeConstraint as TimeLayerConstraint

    assert TimeConstraint is TimeLayerConstraint
    (between,) = question_times("Who coached the team between 1990 and 1995?")
    assert between.kind is TemporalRelation.IN and between.text == "1990–1995"
    assert between.admits(TimePoint(1993, 5), None) and not between.admits(TimePoint(1996), TimePoint(1997))
    with pytest.raises(ConfigError, match="compares facts with each other"):
        TimeConstraint("last").admits(TimePoint(2000), None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Who visited China before 24 June 2006?", "before 2006-06-24"),
        ("After March 2012, who criticised Iran?", "after 2012-03"),
        ("Who did Obama visit in 2014-05?", "in 2014-05"),
        ("Who was the first to visit Iraq?", "first"),
        ("Who last made a statement to Japan?", "last"),
        ("Who visited China?", None),
        # the one question-time reader (tkgqa.query.text.timeref): "until"/"from" read as "in"
        ("Who coached the team until 1998?", "in 1998"),
        ("Who played for Juventus from 1990?", "in 1990"),
        ("Who visited China prior to 2006?", "before 2006"),
        # first/last relative to an event whose time the question does not state: no constraint
        ("After the Danish ministry, who was the first to visit Iraq?", None),
        ("Who last visited Kuwait before Tim Pawlenty?", None),
        ("Who was the first to visit Iraq in the same year as Jack Straw?", None),
        ("After 2015, who was the first to visit Iraq?", "after 2015"),
    ],
)
def test_parse_time_constraint(text: str, expected: str | None) -> None:
    found = parse_time_constraint(text)
    assert (str(found) if found else None) == expected
