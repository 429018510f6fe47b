"""Rule families of the context reasoner added for TimeQuestions-style questions, on tiny hand-made contexts
(fictional names): verbatim relation labels and templated qualifiers, events named with a year, end-of-
interval cues and span/"how long" time targets, short country names, the most specific fact at an
explicit time."""

from __future__ import annotations

import pytest

from tkgqa.datasets import Question
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods.symbolic import SymbolicReasoner
from tkgqa.query.program.contextual_rules import (
    alias_mentions,
    exact_spans,
    phrase_positions,
    refine_target,
    year_in_name,
)
from tkgqa.query.text.frame import Target
from tkgqa.query.text.mentions import EntityMention
from tkgqa.query.text.words import tokenize


def ask(text: str, context: list[Fact]) -> list[str]:
    question = Question(qid="r", text=text, context=context)
    return SymbolicReasoner().answer(question, TemporalKG(name="unused")).answers


# --- verbatim relation labels + templated qualifier ----------------------------------------------------
AWARDS = [
    Fact.of("Ann Ash", "statement is subject of", "9th Star Awards", 1990, 1990),
    Fact.of("Ann Ash", "statement is subject of", "12th Star Awards", 1993, 1993),
    Fact.of("Ann Ash", "nominated for", "Star Award for Best Album", 1993, 1993),
    Fact.of("Ann Ash", "nominated for", "Star Award for Best Song", 1990, 1990),
]


def test_templated_qualifier_picks_the_fact_at_the_same_time() -> None:
    text = "what is nominated for of ann ash that is statement is subject of is 9th star awards"
    assert ask(text, AWARDS)[0] == "Star Award for Best Song"


def test_phrase_positions_needs_two_words() -> None:
    tokens = tokenize("what is nominated for of ann ash")
    assert phrase_positions(tokens, "nominated for") == [2]
    assert phrase_positions(tokens, "for") == []


# --- events named with a year -----------------------------------------------------------------------------
CUPS = [
    Fact.of("1961 Valley Cup", "winner", "Hill Rovers"),
    Fact.of("1975 Valley Cup", "winner", "Hill Rovers"),
    Fact.of("1980 Plain Trophy", "winner", "Hill Rovers"),
    Fact.of("Hill Rovers", "league", "Valley League", 1950, None),
]


def test_time_question_over_undated_year_named_events() -> None:
    assert ask("when was the last time hill rovers won the valley cup", CUPS)[0] == "1975 Valley Cup"
    assert ask("what years did hill rovers win the valley cup", CUPS)[0] in {
        "1961 Valley Cup",
        "1975 Valley Cup",
    }


def test_year_in_name() -> None:
    assert year_in_name("1983 Valley Cup") == "1983"
    assert year_in_name("Valley Cup") is None
    assert year_in_name("1983–84 season 1985") is None  # two years: not one event year


# --- end cues and span targets ----------------------------------------------------------------------------
CAREER = [
    Fact.of("Cy Dale", "educated at", "Lake Conservatory", 1925, 1929),
    Fact.of("Cy Dale", "spouse", "Di Elm", 1950, 1962),
    Fact.of("Cy Dale", "significant event", "date of birth", 1907, 1907),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("when did cy dale complete his education at lake conservatory", "1929"),
        ("what year did cy dale die while married to di elm", "1962"),
        ("between what dates was cy dale married to di elm", "1950"),
        ("give me the end time for cy dale as spouse as di elm", "1962"),
    ],
)
def test_end_and_span_targets(text: str, expected: str) -> None:
    assert ask(text, CAREER)[0] == expected


def test_refine_target_keeps_constraints() -> None:
    entity = Target("entity", None, 0)
    assert refine_target(tokenize("what is occupation of x that is end time is 1990"), entity) is entity
    assert refine_target(tokenize("how long was x married to y"), entity).kind == "time"


# --- short country names, exact spans -----------------------------------------------------------------------
def test_short_country_names() -> None:
    facts = [
        Fact.of("United States of America", "head of state", "Al Pine", 1789, 1797),
        Fact.of("United States of America", "head of state", "Bo Oak", 1797, 1801),
        Fact.of("Al Pine", "occupation", "farmer"),
    ]
    ents = {"United States of America", "Al Pine"}
    found = alias_mentions(tokenize("who was the third us president"), ents)
    assert "United States of America" in found
    assert alias_mentions(tokenize("tell us who won"), ents) == {}
    assert ask("who was the first us president", facts)[0] == "Al Pine"


def test_exact_spans_move_a_stretched_mention() -> None:
    tokens = tokenize("end time for carl i of norland has title as king of norland")
    stretched = {
        "king of Norland": EntityMention(5, 11, "king of Norland", 1.0, "scan", 0.8),
        "Carl I of Norland": EntityMention(2, 6, "Carl I of Norland", 2.0, "scan", 1.0),
    }
    fixed = exact_spans(tokens, stretched)
    assert (fixed["king of Norland"].start, fixed["king of Norland"].end) == (10, 13)
    assert (fixed["Carl I of Norland"].start, fixed["Carl I of Norland"].end) == (3, 7)


# --- most specific fact at an explicit time ---------------------------------------------------------------
def test_fact_starting_at_the_time_is_preferred() -> None:
    facts = [
        Fact.of("Eve Fox", "spouse", "Gus Hale", 1940, 1970),
        Fact.of("Eve Fox", "spouse", "Ian Jay", 1957, 1965),
    ]
    assert ask("who was eve fox married to in 1957", facts)[0] == "Ian Jay"
