"""The multi-hop nodes of the one typed program (tkgqa.query.program.nodes): ``hop``, ``and``/``or``
(``Combine``), ``compare`` and a constant time range, run by its executor; and the recorded-program reader
(``from_dict``), which reads outside input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tkgqa.errors import ConfigError, DataError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.query.program.answer_sets import CompareMode, ValueKind
from tkgqa.query.program.executor import Executor
from tkgqa.query.program.nodes import (
    Combine,
    Compare,
    Const,
    Entities,
    Exclude,
    Filter,
    Hop,
    Match,
    Select,
    SetOperation,
    Times,
    from_dict,
    to_dict,
)
from tkgqa.time import Extreme, TemporalRelation, TimePoint, parse_time

#: (subject, relation, object, day): state visits, birthplaces and a self-loop (never an answer of a hop from
#: China)
VISITS = """Obama visit China 2009-11-15 | Obama visit China 2014-11-10 | Merkel visit China 2014-07-06
| Putin visit China 2014-05-20 | Merkel visit India 2015-10-04 | Obama visit India 2015-01-25
| Obama born_in Honolulu 1961 | Merkel born_in Hamburg 1954 | Honolulu located_in USA 1959
| China visit China 2014-01-01"""


@pytest.fixture
def kg() -> TemporalKG:
    rows = [row.split() for row in VISITS.replace("\n", " ").split("|")]
    return TemporalKG([Fact(s, r, o, parse_time(t), parse_time(t)) for s, r, o, t in rows])


def test_hop_reads_on_from_the_entities_of_its_rows(kg: TemporalKG) -> None:
    visitors = Exclude(Match(None, "visit", "China"), ("China",))
    born = Hop(visitors, "born_in")
    answers = Executor(kg).answer_set(Entities(born))
    assert set(answers.values()) == {"Honolulu", "Hamburg"}
    assert all(f.relation == "born_in" for f in answers.facts())
    country = Executor(kg).run(Entities(Hop(born, "located_in")))
    assert country.answers == ["USA"]
    back = Executor(kg).answer_set(Entities(Hop(Match("Obama", "born_in", None), "born_in", inverse=True)))
    assert back.values() == ["Obama"]  # inverse: the subjects of the facts whose object is a source
    visited = Executor(kg).answer_set(Entities(Hop(Match(None, "visit", "India"), "visit")))
    assert visited.values() == ["China", "India"]  # most supporting facts first


def test_hop_never_returns_a_source(kg: TemporalKG) -> None:
    visited_by_visitors_of_china = Hop(Match("China", "visit", None), "visit", inverse=True)
    assert "China" not in Executor(kg).answer_set(Entities(visited_by_visitors_of_china)).values()


def test_combine_and_or_join_parts_on_their_answers(kg: TemporalKG) -> None:
    china, india = Match(None, "visit", "China"), Match(None, "visit", "India")
    both = Executor(kg).answer_set(Entities(Combine(SetOperation.AND, (china, india))))
    assert set(both.values()) == {"Obama", "Merkel"}
    assert {f.object for f in both.facts()} == {"China", "India"}  # the facts of every part
    either = Executor(kg).answer_set(Entities(Combine("or", (Match(None, "born_in", "Hamburg"), india))))
    assert set(either.values()) == {"Merkel", "Obama"}
    with pytest.raises(ConfigError):
        Combine("xor", (china,))  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Combine(SetOperation.AND, ())


def test_compare_keeps_the_winner_on_its_own_facts(kg: TemporalKG) -> None:
    named = (("Merkel", Match("Merkel", "visit", "China")), ("Putin", Match("Putin", "visit", "China")))
    earlier = Executor(kg).answer_set(Entities(Compare(named, CompareMode.EARLIER)))
    assert earlier.kind is ValueKind.ENTITY and earlier.values() == ["Putin"]
    assert [f.subject for f in earlier.facts()] == ["Putin"]
    assert Executor(kg).run(Entities(Compare(named, "later"))).answers == ["Merkel"]  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Compare((), CompareMode.EARLIER)


def test_a_constant_range_filters_within_it(kg: TemporalKG) -> None:
    window = Const(TimePoint(2014, 5), TimePoint(2014, 7))
    assert str(window) == "2014-05..2014-07"
    program = Entities(Filter(Match(None, "visit", "China"), TemporalRelation.IN, window))
    assert set(Executor(kg).run(program).answers) == {"Putin", "Merkel"}
    first = Times(Select(Match("Obama", "visit", "China"), Extreme.FIRST))
    assert Executor(kg).answer_set(first).values() == ["2009-11-15"]


def test_the_new_nodes_print_and_round_trip() -> None:
    program = Entities(
        Compare(
            (
                (
                    "a",
                    Combine(SetOperation.OR, (Hop(Match("x", "r", None), "s", True), Match(None, "t", "y"))),
                ),
                (
                    "b",
                    Filter(
                        Match("b", "r", "o"), TemporalRelation.IN, Const(TimePoint(2012), TimePoint(2013))
                    ),
                ),
            ),
            CompareMode.MORE,
        )
    )
    assert str(program) == (
        "entities(compare(more, a: or(hop(match(x, r, ?), ~s), match(?, t, y)), "
        "b: in(match(b, r, o), 2012..2013)))"
    )
    assert from_dict(to_dict(program)) == program


# --- the recorded-program reader reads outside input --------------------------------------------------
_names = st.one_of(st.none(), st.text(max_size=5), st.integers(), st.lists(st.integers(), max_size=2))
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_kinds = st.sampled_from(
    ["match", "hop", "combine", "compare", "const", "filter", "select", "entities", "times", "x"]
)


@st.composite
def _node_like(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    """A dict shaped roughly like a recorded node, with any field wrong or missing."""
    d: dict[str, Any] = {"node": draw(_kinds)}
    for key in ("subject", "relation", "object", "name", "op", "mode", "point", "end", "inverse"):
        if draw(st.booleans()):
            d[key] = draw(
                st.one_of(_names, st.sampled_from(["and", "or", "earlier", "in", "2012", "2012-05"]))
            )
    if depth < 3:
        child = _node_like(depth + 1)
        if draw(st.booleans()):
            d["rows"] = draw(st.one_of(child, _json))
        if draw(st.booleans()):
            d["parts"] = draw(st.one_of(st.lists(child, max_size=3), _json))
        if draw(st.booleans()):
            d["candidates"] = draw(
                st.one_of(st.lists(st.fixed_dictionaries({"name": _names, "rows": child}), max_size=2), _json)
            )
    return d


@settings(max_examples=300, deadline=None)
@given(st.one_of(_node_like(), _json))
def test_from_dict_reads_a_node_or_says_data_error(data: Any) -> None:
    try:
        node = from_dict(data)
    except DataError:
        return
    assert from_dict(to_dict(node)) == node


def test_from_dict_bounds_the_width_of_a_node() -> None:
    part = {"node": "match", "subject": "a", "relation": "r", "object": None}
    with pytest.raises(DataError, match="at most"):
        from_dict({"node": "combine", "op": "or", "parts": [part] * 65})
