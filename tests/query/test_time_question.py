"""The one place that reads whether a question asks for a time (:mod:`tkgqa.query.text.frame`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tkgqa.query.text.frame import asked_granularity, asks_time, find_target, interrogative_when
from tkgqa.query.text.words import tokenize
from tkgqa.time import Granularity

_WORDS = ["when", "When", "in", "On", "at", "during", "what", "Which", "year", "month", "day", "date", "time"]
_QUESTIONS = st.text(max_size=60) | st.lists(
    st.sampled_from([*_WORDS, "how long", "x", "?"]), max_size=8
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_QUESTIONS)
def test_time_readers_are_total_and_agree(text: str) -> None:
    asked = asks_time(text)
    gran = asked_granularity(text)
    assert isinstance(asked, bool)
    assert isinstance(interrogative_when(text), bool)
    assert gran is None or isinstance(gran, Granularity)
    assert gran is None or asked  # a point in time asked is a time asked
    find_target(tokenize(text))  # the parser's reading is total too


@pytest.mark.parametrize(
    ("text", "asked", "gran"),
    [
        ("When did Alice visit Freedonia?", True, Granularity.DAY),
        ("In which month did Alice visit Freedonia?", True, Granularity.MONTH),
        ("  what year did Bob leave?", True, Granularity.YEAR),
        ("On what date did the talks start?", True, Granularity.DAY),
        ("At which time did they meet?", True, Granularity.DAY),
        ("Which time did Bob visit Carol first?", True, None),  # an occasion, not a point in time
        ("How long did the war last?", True, None),  # a duration
        ("Who visited Freedonia in 2015?", False, None),
        ("Which country did Alice visit?", False, None),
        ("", False, None),
    ],
)
def test_opening_words(text: str, asked: bool, gran: Granularity | None) -> None:
    assert asks_time(text) is asked
    assert asked_granularity(text) == gran


def test_interrogative_when() -> None:
    assert interrogative_when("When")
    assert interrogative_when("In the month when")
    assert not interrogative_when("Who visited Iraq after the Danish ministry, when")
    assert not interrogative_when("")
