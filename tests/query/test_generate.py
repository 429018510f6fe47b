"""The question generator (query.generate) on a tiny hand-made KG: every pattern, gold computed by the
executor, small non-empty answer sets, no duplicates, seeded; the count parser under arbitrary input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tkgqa.errors import ConfigError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.query import Executor, find_times, tokenize
from tkgqa.query.generate.questions import Pattern, QuestionGenerator, generate_questions, parse_counts
from tkgqa.query.generate.verbalize import past_tense, time_text
from tkgqa.time import parse_time

# Invented names: visits to and criticism of Freedonia, one agreement.
FACTS = [
    Fact.of("Alice", "Make_a_visit", "Freedonia", "2010-01-05"),
    Fact.of("Bob", "Make_a_visit", "Freedonia", "2011-03-02"),
    Fact.of("Carol", "Make_a_visit", "Freedonia", "2012-07-20"),
    Fact.of("Bob", "Make_a_visit", "Freedonia", "2013-02-11"),
    Fact.of("Dave", "Make_a_visit", "Freedonia", "2014-09-09"),
    Fact.of("Erin", "Make_a_visit", "Freedonia", "2014-09-30"),
    Fact.of("Alice", "Criticize_or_denounce", "Freedonia", "2012-08-01"),
    Fact.of("Erin", "Criticize_or_denounce", "Freedonia", "2013-05-05"),
    Fact.of("Freedonia", "Sign_formal_agreement", "Sylvania", "2011-05-05"),
]


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG(FACTS, name="tiny")


def test_every_pattern_has_computed_gold(kg: TemporalKG) -> None:
    made = QuestionGenerator(kg, seed=1, max_answers=3).generate({p: 2 for p in Pattern})
    assert {g.pattern for g in made} == set(Pattern)
    texts = [g.question.text for g in made]
    assert len(texts) == len(set(texts))  # deduplicated
    for g in made:
        q = g.question
        assert 1 <= len(q.answers) <= 3
        assert q.answers == list(dict.fromkeys(Executor(kg).run(g.program).answers))  # computed, not written
        assert q.qtype == g.pattern.qtype and q.answer_type == g.pattern.answer_type
        assert q.extra["program"] == str(g.program) and q.entities
        assert all(kg.has_entity(e) for e in q.entities)


def test_patterns_read_as_their_program_says(kg: TemporalKG) -> None:
    made = QuestionGenerator(kg, seed=3).generate({Pattern.AFTER_FIRST: 3, Pattern.FIRST_LAST_TIME: 3})
    for g in made:
        q = g.question
        if g.pattern is Pattern.AFTER_FIRST:
            assert q.text.startswith("After ") and "first" in q.text
            assert q.qlabel == "Multiple" and q.entities[0] not in q.answers  # the reference is excluded
        else:
            assert q.answer_type == "time" and all(a[:4].isdigit() for a in q.answers)


def test_equal_questions_carry_a_time_the_shared_reader_finds(kg: TemporalKG) -> None:
    made = QuestionGenerator(kg, seed=0).generate({Pattern.EQUAL: 4, Pattern.BEFORE_AFTER: 2})
    assert made
    for g in made:
        q = g.question
        found = [t.point.iso() for t in find_times(q.text, tokenize(q.text))]
        assert q.times and found == q.times


def test_seeded_and_bounded(kg: TemporalKG) -> None:
    first = [g.question.text for g in generate_questions(kg, "all=2", seed=5)]
    again = [g.question.text for g in generate_questions(kg, "all=2", seed=5)]
    assert first == again
    # a tiny KG cannot give 50 distinct "first visitor" questions: fewer come back, the loop ends
    assert len(generate_questions(kg, {Pattern.FIRST_LAST: 50}, seed=0)) < 50


def test_relations_filter_and_errors(kg: TemporalKG) -> None:
    made = generate_questions(kg, {Pattern.EQUAL: 3}, seed=0, relations=["Criticize_or_denounce"])
    assert made and all("Criticize_or_denounce" in g.question.extra["program"] for g in made)
    with pytest.raises(ConfigError, match="no dated facts"):
        QuestionGenerator(TemporalKG([Fact("A", "r", "B")], name="undated"))
    with pytest.raises(ConfigError, match="max_answers"):
        QuestionGenerator(kg, max_answers=0)


def test_verbalisation() -> None:
    assert past_tense("Make_a_visit") == "made a visit"
    assert past_tense("Criticize_or_denounce") == "criticized or denounced"
    assert past_tense("Express_intent_to_meet_or_negotiate") == "expressed intent to meet or negotiate"
    assert past_tense("Host_a_visit") == "hosted a visit"
    assert time_text(parse_time("2015-11-19")) == "on 19 November 2015"
    assert time_text(parse_time("2005-04"), "before") == "before April 2005"
    assert time_text(parse_time("2012")) == "in 2012"


def test_parse_counts() -> None:
    assert parse_counts("equal=2, first-last=3") == {Pattern.EQUAL: 2, Pattern.FIRST_LAST: 3}
    assert sum(parse_counts(20).values()) == 20 and len(parse_counts(20)) == len(Pattern)
    assert parse_counts("all=1") == dict.fromkeys(Pattern, 1)
    assert parse_counts({"equal_multi": 4}) == {Pattern.EQUAL_MULTI: 4}
    for bad, match in (("equel=2", "unknown question pattern"), ("equal", "PATTERN=N"), ("equal=x", "whole")):
        with pytest.raises(ConfigError, match=match):
            parse_counts(bad)
    with pytest.raises(ConfigError, match="negative"):
        parse_counts("equal=-1")


@given(st.text(max_size=60))
def test_parse_counts_never_fails_otherwise(spec: str) -> None:
    try:
        counts = parse_counts(spec)
    except ConfigError:
        return
    assert all(isinstance(p, Pattern) and n >= 0 for p, n in counts.items())


@given(st.dictionaries(st.sampled_from([p.value for p in Pattern]), st.integers(0, 50), max_size=5))
def test_parse_counts_round_trips(counts: dict[str, int]) -> None:
    spec = ",".join(f"{k}={v}" for k, v in counts.items())
    assert parse_counts(spec) == {Pattern(k): v for k, v in counts.items()}
