"""The one list parser (tkgqa.llm.lists): lists written out in every form read back to the same items,
apostrophes and quotes included; the defects real model text showed (issue 19) stay fixed."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tkgqa.errors import ParseError
from tkgqa.llm import ListForm, parse_answer_list, read_answer_list, read_list
from tkgqa.llm.lists import clean_answer

SETTINGS = settings(max_examples=200, deadline=None, database=None)
# Text with what breaks naive list parsers: apostrophes, both quote kinds, commas, brackets, backslashes.
_CHARS = st.sampled_from([*"abcXYZ019 é'\",[]#\\-.", "\n", "\t", "\u2028", "ü"])
_ANY_ITEM = st.lists(_CHARS, max_size=14).map("".join)
# An answer-like item: words with apostrophes and inner quotes, but not at its edges (nor a final period).
_WORD = st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=8)
_INNER = st.sampled_from([" ", "'", "' '", ' "', '" ', "-", " 'n' ", "’s "])
_NONE_WORDS = ("none", "null", "nil", "unknown", "not sure", "no answer")
_ANSWER_ITEM = (st.builds(lambda a, sep, b: a + sep + b, _WORD, _INNER, _WORD) | _WORD).filter(
    lambda x: not any(w in x.casefold() for w in _NONE_WORDS)
)


@SETTINGS
@given(st.lists(_ANY_ITEM, max_size=7))
def test_json_and_python_lists_read_back_exactly(items: list[str]) -> None:
    for text in (json.dumps(items), json.dumps(items, ensure_ascii=False), repr(items)):
        reading = read_list(text)
        assert list(reading.items) == items and reading.form is ListForm.BRACKETED
        assert not reading.truncated
    assert list(read_list(f"Sure! The list is {items!r}.\nHope it helps.").items) == items


@SETTINGS
@given(st.lists(_ANSWER_ITEM, min_size=1, max_size=6, unique=True))
def test_answer_lists_in_every_form_read_back(items: list[str]) -> None:
    forms = {
        "json": json.dumps(items, ensure_ascii=False),
        "repr": repr(items),
        "bare": "[" + ", ".join(items) + "]",
        "bullets": "Possible answers:\n" + "\n".join(f"- {x}" for x in items),
        "numbered": "\n".join(f"{i}. {x}" for i, x in enumerate(items, 1)),
    }
    for form, text in forms.items():
        assert parse_answer_list(text) == items, form
    if all("," not in x for x in items):
        assert parse_answer_list("Answer: " + ", ".join(items)) == items


@SETTINGS
@given(st.lists(_ANSWER_ITEM, min_size=2, max_size=6, unique=True), st.data())
def test_a_list_cut_off_keeps_its_complete_items(items: list[str], data: st.DataObject) -> None:
    text = repr(items)
    last = text.rindex(repr(items[-1]))
    cut = data.draw(st.integers(last + 1, len(text) - 2))  # inside the last item (its closing quote lost)
    reading = read_answer_list(text[:cut])
    assert list(reading.items) == items[:-1] and reading.truncated and "cut off" in reading.note


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("[People's Republic of China, Palau]", ["People's Republic of China", "Palau"]),
        ("['Giuseppe 'Nino' Farina']", ["Giuseppe 'Nino' Farina"]),
        ("['Giuseppe 'Nino' Farina', 'Alberto Ascari']", ["Giuseppe 'Nino' Farina", "Alberto Ascari"]),
        ("['s-Hertogenbosch, Palau]", ["'s-Hertogenbosch", "Palau"]),
        ("['2000, '1996, '1999']", ["2000", "1996", "1999"]),  # closing quotes lost
        ("- New Haven population in 2014: [131,014]\n- Unknown", ["New Haven population in 2014: [131,014]"]),
        ("- ['a', 'b']", ["a", "b"]),  # a bullet that only holds the list
        ("['a', 'b']\n\n1. because\n2. of this", ["a", "b"]),  # the list before the bullets wins
        ("Nathan Deal', 'Sonny Perdue']", ["Nathan Deal", "Sonny Perdue"]),  # the opening was lost
        ("- 1971\n- [Arthur Beetson]", ["1971", "Arthur Beetson"]),
        ("Answer: Alice\nBecause she went there.", ["Alice"]),
        ("The answer is: Thailand.", ["Thailand"]),
        ("George Washington\nGrover Cleveland", ["George Washington", "Grover Cleveland"]),
        ('```json\n["2012-05"]\n```', ["2012-05"]),
        ("[1907, 1918]", ["1907", "1918"]),
    ],
)
def test_answer_list_examples(text: str, items: list[str]) -> None:
    assert parse_answer_list(text) == items


def test_truncation_and_declined_are_said() -> None:
    cut = read_answer_list("['Alpha', 'Beta', 'Gam")
    assert cut.items == ("Alpha", "Beta") and cut.truncated and not cut.declined
    assert read_answer_list("[2014-11, 2015-05-27, 20").items == ("2014-11", "2015-05-27")
    for text in ("[None]", "[]", "I don't know.", "Unknown"):
        reading = read_answer_list(text)
        assert reading.items == () and reading.declined, text
        with pytest.raises(ParseError, match="gives no answer"):
            parse_answer_list(text)
        assert parse_answer_list(text, allow_empty=True) == []
    for text in ("", "   ", "[", "']"):
        with pytest.raises(ParseError):
            parse_answer_list(text, allow_empty=True)


def test_separator_and_cap() -> None:
    assert parse_answer_list("[Apple#Banana]", separator="#") == ["Apple", "Banana"]
    assert parse_answer_list("['C#', 'F#']", separator="#") == ["C#", "F#"]  # quoted items are not split
    assert parse_answer_list(json.dumps([str(i) for i in range(20)]), max_answers=3) == ["0", "1", "2"]


def test_clean_answer() -> None:
    assert clean_answer(' "Collateral" ') == "Collateral"
    assert clean_answer("D.C.") == "D.C." and clean_answer("It ended in 1836.") == "It ended in 1836"
    assert clean_answer('a "q"') == 'a "q"'  # inner quotes stay
