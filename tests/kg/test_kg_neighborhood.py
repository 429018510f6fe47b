"""Neighbourhoods: 1-hop subgraph, relations by hop (in-memory and reference store agree), lifetimes."""

from __future__ import annotations

import pytest

from tkgqa.errors import NotFoundError
from tkgqa.kg import Fact, KGStore, TemporalKG
from tkgqa.kg.neighborhood import EntityLifetime, entity_lifetime, neighbors, relations_by_hop, subgraph
from tkgqa.testing import ListStore
from tkgqa.time import TimePoint

P = TimePoint.of


FACTS = [
    Fact.of("A", "r1", "B", "2015-01-05"),
    Fact.of("B", "r2", "A", "2015-02-01"),
    Fact.of("A", "r1", "C", "2014-06-01"),
    Fact.of("A", "loop", "A", "2013"),
    Fact.of("B", "r3", "D", "2016-01-01"),
    Fact.of("C", "r4", "E", "2010", "2020"),
    Fact.of("D", "r5", "F", "2016-05-05"),
    Fact.of("E", "r1", "G", "2011-03"),
    Fact.of("H", "r6", "I", None, None),
]


def plain(kg: TemporalKG) -> KGStore:
    """The same facts in the naive reference store (not a TemporalKG)."""
    return ListStore(kg)


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG(FACTS)


def test_subgraph(kg: TemporalKG) -> None:
    got = subgraph(kg, "A")
    assert got == [FACTS[3], FACTS[2], FACTS[0], FACTS[1]]  # both directions, self-loop once, by start
    assert subgraph(kg, "A", time="2015") == [FACTS[0], FACTS[1]]
    assert subgraph(kg, "A", limit=1) == [FACTS[3]]
    assert subgraph(kg.as_of("2015"), "A") == [FACTS[3], FACTS[2]]
    assert neighbors(kg, "A") == ["B", "C"]
    with pytest.raises(NotFoundError, match="did you mean"):
        subgraph(kg, "a_")


@pytest.mark.parametrize("wrap", [lambda kg: kg, plain])
def test_relations_by_hop(kg: TemporalKG, wrap: type) -> None:
    store = wrap(kg)
    assert relations_by_hop(store, "A", 1) == {1: ["r1", "loop", "r2"]}
    assert relations_by_hop(store, "A", 3) == {1: ["r1", "loop", "r2"], 2: ["r3", "r4"], 3: ["r5"]}
    assert relations_by_hop(store, "A", 4)[4] == []
    assert relations_by_hop(store, "H", 3) == {1: ["r6"], 2: [], 3: []}
    assert relations_by_hop(store, "A", 2, time="2015") == {1: ["r1", "r2"], 2: []}  # B has no 2015 r3
    assert relations_by_hop(store, "A", 2, time="2014-2016") == {1: ["r1", "r2"], 2: ["r3", "r4"]}
    assert relations_by_hop(store, "A", 3, max_frontier=1) == {1: ["r1", "loop", "r2"], 2: ["r3"], 3: ["r5"]}


def test_relations_by_hop_on_snapshots(kg: TemporalKG) -> None:
    assert relations_by_hop(kg.as_of("2015"), "A", 3) == {1: ["loop", "r1"], 2: ["r4"], 3: []}


@pytest.mark.parametrize("wrap", [lambda kg: kg, plain])
def test_entity_lifetime(kg: TemporalKG, wrap: type) -> None:
    store = wrap(kg)
    assert entity_lifetime(store, "A") == EntityLifetime("A", P("2013"), P("2015-02-01"), 4)
    assert entity_lifetime(store, "C") == EntityLifetime("C", P("2010"), P("2020"), 2)
    assert entity_lifetime(store, "H") == EntityLifetime("H", None, None, 1)
    assert entity_lifetime(store, "A").to_dict() == {
        "entity": "A",
        "first": "2013",
        "last": "2015-02-01",
        "n_facts": 4,
    }


def test_lifetime_snapshot_and_open_ends(kg: TemporalKG) -> None:
    assert entity_lifetime(kg.as_of("2014"), "A") == EntityLifetime("A", P("2013"), P("2013"), 1)
    assert entity_lifetime(kg.as_of("2000"), "A") == EntityLifetime("A", None, None, 0)
    kg.add([Fact.of("A", "member", "Z", "2017-03", None)])  # open end: counts by its start
    assert entity_lifetime(kg, "A").last == P("2017-03")
