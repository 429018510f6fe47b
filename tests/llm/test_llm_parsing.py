"""Output parsers: examples and Hypothesis properties."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tkgqa.errors import ParseError
from tkgqa.llm import extract_choice, extract_json, extract_json_list, extract_json_object, parse_string_list

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
string_lists = st.lists(st.text(max_size=30), max_size=8)


@given(st.dictionaries(st.text(max_size=10), json_values, max_size=5))
def test_extract_json_object_from_fenced_block_with_prose(obj: dict) -> None:
    text = f"Here you go:\n```json\n{json.dumps(obj, indent=2)}\n```\nHope that helps!"
    assert extract_json_object(text) == obj


@given(st.dictionaries(st.text(max_size=10), json_values, min_size=1, max_size=5))
def test_extract_json_object_embedded_in_prose(obj: dict) -> None:
    assert extract_json(f"The result is {json.dumps(obj)} as requested.") == obj


@given(st.lists(json_values, max_size=5))
def test_extract_json_list_roundtrip(items: list) -> None:
    assert extract_json_list(json.dumps(items)) == items
    assert extract_json_list(f"Answer:\n{json.dumps(items)}\n") == items


def test_extract_json_examples() -> None:
    assert extract_json('```\n{"a": [1, 2]}\n```') == {"a": [1, 2]}
    assert extract_json_list('{"answers": ["x", "y"]}') == ["x", "y"]
    assert extract_json("broken { then [1, 2] ok") == [1, 2]
    with pytest.raises(ParseError, match="no JSON") as info:
        extract_json("nothing here")
    assert info.value.raw == "nothing here"


@given(string_lists)
def test_string_list_json_roundtrip(items: list[str]) -> None:
    assert parse_string_list(json.dumps(items)) == items
    assert parse_string_list(json.dumps(items, ensure_ascii=False)) == items


@given(string_lists)
def test_string_list_python_repr_roundtrip(items: list[str]) -> None:
    assert parse_string_list(repr(items)) == items
    assert parse_string_list(f"The entities are {items!r}.") == items


@given(
    st.lists(st.from_regex(r"[A-Za-z][A-Za-z0-9 ]{0,15}[A-Za-z0-9]", fullmatch=True), min_size=1, max_size=6)
)
def test_string_list_bare_items(items: list[str]) -> None:
    assert parse_string_list("[" + ", ".join(items) + "]") == items


def test_string_list_examples() -> None:
    assert parse_string_list("""["Barack Obama", 'Angela Merkel']""") == ["Barack Obama", "Angela Merkel"]
    assert parse_string_list("- France\n- Germany\n") == ["France", "Germany"]
    assert parse_string_list("1. France\n2) Germany") == ["France", "Germany"]
    assert parse_string_list("France, Germany") == ["France", "Germany"]
    assert parse_string_list('["it\'s", "a \\"q\\""]') == ["it's", 'a "q"']
    assert parse_string_list('["a", "b"') == [
        "a",
        "b",
    ]  # cut off: the complete items (tests/llm/test_lists.py)
    with pytest.raises(ParseError):
        parse_string_list("   ")


names = st.from_regex(r"[A-Za-z][A-Za-z ]{0,20}[A-Za-z]", fullmatch=True)


@given(st.lists(names, min_size=1, max_size=8, unique=True), st.data())
def test_extract_choice_exact(choices: list[str], data: st.DataObject) -> None:
    pick = data.draw(st.sampled_from(choices))
    assert extract_choice(pick, choices) == pick
    assert extract_choice(f"  {pick}.\n", choices) == pick


@given(st.lists(names, min_size=1, max_size=8, unique=True), st.text(max_size=60))
def test_extract_choice_returns_member_or_raises(choices: list[str], text: str) -> None:
    try:
        assert extract_choice(text, choices) in choices
    except ParseError as exc:
        assert exc.raw == text


def test_extract_choice_examples() -> None:
    choices = ["Barack Obama", "Angela Merkel", "New York", "New York City"]
    assert extract_choice("barack obama", choices) == "Barack Obama"
    assert extract_choice("I think it is Angela Merkel, definitely.", choices) == "Angela Merkel"
    assert extract_choice("The answer: New York City", choices) == "New York City"
    with pytest.raises(ParseError):
        extract_choice("Barak Obama", choices)  # a near miss is refused, never swapped for a choice
    assert extract_choice('"New York"', choices) == "New York"
    with pytest.raises(ParseError, match="not one of the choices"):
        extract_choice("Emmanuel Macron", choices)
    # a choice only counts when it stands as a word, not inside another word
    with pytest.raises(ParseError):
        extract_choice("cartography", ["art", "xyz"])
