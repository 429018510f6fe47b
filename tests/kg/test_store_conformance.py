"""Store conformance suite: the tests every :class:`~tkgqa.kg.KGStore` backend must pass.

The rules (insertion order, duplicates, result order, time windows at every granularity, open ends,
snapshots, the walk methods ``incident``/``hop``/``relation_counts``/``time_span``) are those documented in
:mod:`tkgqa.kg.base`. Each test runs once per backend in :data:`BACKENDS` and per build mode (all facts at
construction, or half of them appended afterwards). Expected values are written out by hand, or computed
by the plain oracles below, or — for the ARI operators and the neighbourhood functions, whose temporal
semantics evolve elsewhere — required to be *identical* to the naive reference backend
:class:`tkgqa.testing.ListStore` on the same facts.

The DuckDB store runs twice: in memory (every fact in its in-memory delta) and as a file reopened (the
memory-mapped snapshot of the core; in the ``appended`` mode half the facts then go through the delta).

**Adding a backend** (e.g. the DuckDB store of issue #14) is one line in :data:`BACKENDS`: a
``pytest.param`` holding a factory ``(facts, *, labels, name) -> KGStore``, such as
``pytest.param(DuckDBStore, id="duckdb")`` (wrap it in a ``lambda`` if the constructor differs, and add
``marks=pytest.mark.skipif(...)`` when the backend's dependency is optional).

The test KG is built here by hand: point facts at day, month and year granularity, interval facts with open
starts, open ends or no time at all, a self-loop, same-day ties and a chain for multi-hop walks.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from importlib.util import find_spec
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.errors import ConfigError
from tkgqa.kg import (
    Fact,
    KGStore,
    TemporalKG,
    get_after,
    get_before,
    get_between,
    get_first,
    get_head_entity,
    get_last,
    get_tail_entity,
    get_time,
)
from tkgqa.kg.base import TimeQuery
from tkgqa.kg.duckdb_store import DuckDBStore  # imports duckdb only when a store is built
from tkgqa.kg.neighborhood import entity_lifetime, neighbors, relations_by_hop, subgraph
from tkgqa.testing import ListStore
from tkgqa.time import NEG_INF, POS_INF, Interval, TimePoint, span_of

StoreFactory = Callable[..., KGStore]


def duckdb_file(facts: Iterable[Fact], *, labels: dict[str, str] | None = None, name: str = "kg") -> KGStore:
    """A DuckDB store file written, closed and opened again: it reads through the memory-mapped snapshot of
    the core built on that open (facts added afterwards go through the in-memory delta)."""
    path = Path(tempfile.mkdtemp(prefix="tkgqa-conf-")) / "kg.duckdb"
    with DuckDBStore.open(path, name=name) as store:
        store.add(facts)
        store.set_labels(labels or {})
    return DuckDBStore.open(path, name=name)


_NEEDS_DUCKDB = pytest.mark.skipif(find_spec("duckdb") is None, reason="needs the [store] extra (duckdb)")
BACKENDS = [
    pytest.param(TemporalKG, id="memory"),
    pytest.param(ListStore, id="list"),
    pytest.param(DuckDBStore, id="duckdb", marks=_NEEDS_DUCKDB),  # in memory: every fact in the delta
    pytest.param(duckdb_file, id="duckdb-snapshot", marks=_NEEDS_DUCKDB),
]

P = TimePoint.of


def pt(s: str, r: str, o: str, when: str) -> Fact:
    """A point event (``start == end``)."""
    return Fact(s, r, o, P(when), P(when))


def iv(s: str, r: str, o: str, start: str | None, end: str | None) -> Fact:
    """An interval; ``None`` is an open end."""
    return Fact(s, r, o, P(start) if start else None, P(end) if end else None)


FACTS = [
    pt("Alice", "visit", "France", "2015-03-21"),  # 0
    pt("Alice", "visit", "Germany", "2015-04-02"),
    pt("Alice", "visit", "France", "2014-12-31"),
    pt("Bob", "visit", "Alice", "2015-03-21"),
    pt("Alice", "meet", "Bob", "2015-03"),  # month event
    pt("Bob", "meet", "Carol", "2016"),  # 5: year event
    pt("Carol", "visit", "France", "2015-03-01"),  # same first day as the month event
    pt("France", "sign", "Germany", "2015-03-21"),
    pt("Germany", "sign", "France", "2015-03-21"),
    pt("Dave", "visit", "Germany", "2013-07-14"),
    iv("Alice", "member", "Club_A", "2010", "2012"),  # 10
    iv("Alice", "member", "Club_B", "2013-07", None),  # open end
    iv("Bob", "member", "Club_A", None, "2011-06"),  # open start
    iv("Carol", "spouse", "Dave", None, None),  # no time at all
    iv("Bob", "member", "Club_B", "2012-02-10", "2014-05-31"),
    iv("Dave", "coach", "Club_A", "2009-09", "2015-06-30"),  # 15
    iv("Carol", "coach", "Club_B", "2016-01", None),
    pt("Alice", "award", "Prize", "2012"),
    pt("Bob", "award", "Prize", "2012-11-05"),
    pt("Carol", "award", "Prize", "2012-11"),
    pt("Erin", "praise", "Erin", "2014-02-02"),  # 20: self-loop
    pt("Erin", "visit", "Frank", "2016-12-31"),  # ends the same day as the 2016 year event
    pt("Frank", "visit", "Gina", "2009-09-01"),  # starts the same day as the 2009-09 interval
    pt("Gina", "meet", "Hank", "2010-05"),
    iv("Hank", "member", "Club_C", "2011", "2013"),
    pt("Dave", "meet", "Erin", "2014-02-02"),  # 25
    pt("Germany", "visit", "France", "2012-06-15"),
    iv("France", "host", "Prize", "2012", "2012-11-30"),  # year start, day end
    pt("Club_A", "sign", "Bob", "2011-06-30"),
]
LABELS = {"Prize": "The Prize", "award": "received award"}
ENTITIES = sorted({e for f in FACTS for e in (f.subject, f.object)})
RELATIONS = sorted({f.relation for f in FACTS})
TIMES: list[TimeQuery] = [
    "2009",
    "2011-06",
    "2012",
    "2012-11",
    "2014-02-02",
    "2015-03",
    "2015-03-21",
    "2016-12-31",
    "1900",
    "2030",
    "2012-2015",
    P("2013-07"),
    Interval(P("2011-06-30"), P("2012-02")),
]


@pytest.fixture(params=BACKENDS)
def store_factory(request: pytest.FixtureRequest) -> StoreFactory:
    """The backend under test: ``(facts, *, labels, name) -> KGStore``."""
    return request.param  # type: ignore[no-any-return]


def build(factory: StoreFactory, facts: list[Fact], mode: str = "bulk") -> KGStore:
    """A store of ``facts``: given at construction (``bulk``) or half of them appended afterwards."""
    if mode == "bulk":
        return factory(facts, labels=LABELS, name="conf")
    half = len(facts) // 2
    store = factory(facts[:half], labels=LABELS, name="conf")
    store.add(facts[half:])
    return store


@pytest.fixture(params=["bulk", "appended"])
def store(store_factory: StoreFactory, request: pytest.FixtureRequest) -> KGStore:
    return build(store_factory, FACTS, request.param)


@pytest.fixture
def reference() -> KGStore:
    return ListStore(FACTS, labels=LABELS, name="conf")


# --- plain oracles (the rules of tkgqa.kg.base, written as directly as possible) -----------------------
def _start(f: Fact) -> int:
    return f.start.first_day if f.start else NEG_INF


def _shares_day(f: Fact, time: TimeQuery) -> bool:
    if time is None:
        return True
    lo, hi = span_of(Interval.parse(time) if isinstance(time, str) else time)
    return _start(f) <= hi and (f.end.last_day if f.end else POS_INF) >= lo


def oracle(
    subject: str | None = None,
    relation: str | None = None,
    object: str | None = None,
    time: TimeQuery = None,
    facts: Iterable[Fact] = FACTS,
) -> list[Fact]:
    found = [
        f
        for f in facts
        if subject in (None, f.subject)
        and relation in (None, f.relation)
        and object in (None, f.object)
        and _shares_day(f, time)
    ]
    return sorted(found, key=_start)  # stable: ties in insertion order


def at(*indexes: int) -> list[Fact]:
    return [FACTS[i] for i in indexes]


# --- vocabulary and iteration ---------------------------------------------------------------------------
def test_protocol_vocabulary_and_labels(store: KGStore) -> None:
    assert isinstance(store, KGStore)
    assert len(store) == len(FACTS) and store.count() == len(FACTS)
    assert sorted(store.entities) == ENTITIES and sorted(store.relations) == RELATIONS
    assert all(store.has_entity(e) for e in ENTITIES) and not store.has_entity("Zed")
    assert all(store.has_relation(r) for r in RELATIONS) and not store.has_relation("visit ")
    assert not store.has_entity("visit") and not store.has_relation("Alice")
    assert store.label("Prize") == "The Prize" and store.label("award") == "received award"
    assert store.label("Club_A") == "Club A"
    assert store.live is store


def test_iteration_is_insertion_order(store: KGStore) -> None:
    assert list(store) == FACTS
    assert list(store) == FACTS  # iterating twice gives the same facts


# --- facts() and count() --------------------------------------------------------------------------------
PATTERN_VALUES = {
    "subject": [None, "Alice", "Bob", "France", "Erin", "Zed"],
    "relation": [None, "visit", "member", "sign", "praise", "nope"],
    "object": [None, "France", "Club_A", "Erin", "Prize", "Zed"],
}


@pytest.mark.parametrize("time", [None, "2015", "2012-11", "2015-03-21"])
def test_facts_by_every_field_combination(store: KGStore, time: TimeQuery) -> None:
    for s, r, o in product(*PATTERN_VALUES.values()):
        want = oracle(s, r, o, time)
        assert store.facts(s, r, o, time) == want, (s, r, o, time)
        assert store.facts(subject=s, relation=r, object=o, time=time) == want
        assert store.count(s, r, o, time) == len(want)


def test_facts_hand_checked(store: KGStore) -> None:
    assert store.facts(subject="Alice", relation="visit") == at(2, 0, 1)
    assert store.facts(subject="Alice", object="France") == at(2, 0)
    assert store.facts(relation="sign", object="France") == at(8)
    assert store.facts(subject="Erin", relation="praise", object="Erin") == at(20)
    assert store.facts(subject="Zed") == [] and store.facts(relation="nope") == []
    assert store.facts(object="Alice") == at(3)
    assert store.count(relation="visit") == 9


def test_limit_keeps_the_earliest(store: KGStore) -> None:
    assert store.facts(subject="Alice", relation="visit", limit=2) == at(2, 0)
    assert store.facts(limit=0) == []
    assert store.facts(limit=100) == oracle()


@pytest.mark.parametrize(
    ("time", "expected"),
    [
        ("2015", {0, 1, 4, 11}),  # day and month events inside the year, the open interval running on
        ("2015-03", {0, 4, 11}),  # a month matches the day facts inside it
        ("Mar 2015", {0, 4, 11}),
        ("2015-03-21", {0, 4, 11}),  # a day matches the month event containing it
        ("2015-03-20", {4, 11}),
        ("2012", {10, 17}),  # the interval 2010–2012 ends on 2012-12-31
        ("2012-12-31", {10, 17}),
        ("2013-06", set()),  # between the two memberships
        ("2013-07-01", {11}),
        ("2030", {11}),  # an open end runs on forever
        ("2014-2015", {0, 1, 2, 4, 11}),
    ],
)
def test_time_windows_at_every_granularity(store: KGStore, time: str, expected: set[int]) -> None:
    got = store.facts(subject="Alice", time=time)
    assert got == oracle("Alice", time=time)
    assert {FACTS.index(f) for f in got} == expected
    assert store.facts(subject="Alice", time=Interval.parse(time)) == got
    assert store.count(subject="Alice", time=time) == len(expected)


def test_time_point_arguments(store: KGStore) -> None:
    assert store.facts(subject="Alice", time=P("2015-03")) == at(11, 4, 0)
    assert store.facts(relation="award", time=P("2012-11-05")) == at(17, 19, 18)


def test_open_starts_and_atemporal_facts(store: KGStore) -> None:
    assert store.facts(subject="Bob", time="1900") == at(12)  # an open start reaches back forever
    assert store.facts(subject="Bob", time="2011-06-30") == at(12)
    assert store.facts(subject="Bob", relation="member", time="2011-07") == []
    assert store.facts(relation="spouse", time="1066") == at(13)
    assert store.facts(time="1066") == at(12, 13)


def test_results_are_ordered_by_start_ties_in_insertion_order(store: KGStore) -> None:
    # open start, atemporal, 2009-09 interval, 2013-07 open end, the 2015-03 month event and the
    # 2015-03-01 day event (same first day: insertion order), then the four 2015-03-21 events.
    assert store.facts(time="2015-03-21") == at(13, 15, 11, 4, 0, 3, 7, 8)
    assert store.facts(time="2015-03") == at(13, 15, 11, 4, 6, 0, 3, 7, 8)
    for time in TIMES:
        starts = [_start(f) for f in store.facts(time=time)]
        assert starts == sorted(starts)


# --- add ------------------------------------------------------------------------------------------------
def test_appends_are_visible_at_once_and_duplicates_skipped(store: KGStore) -> None:
    new = pt("Alice", "visit", "Spain", "2015-03-25")
    assert store.add([new, new, FACTS[0]]) == 1
    assert len(store) == len(FACTS) + 1 and list(store) == [*FACTS, new]
    assert store.has_entity("Spain") and "Spain" in store.entities
    assert store.facts(subject="Alice", relation="visit", time="2015-03") == [FACTS[0], new]
    assert store.facts(object="Spain") == [new]
    assert store.incident("Spain") == [new]
    # Same names and same day span is the same fact, whatever the granularity it is written at.
    assert store.add([iv("Alice", "meet", "Bob", "2015-03-01", "2015-03-31")]) == 0
    assert store.add([]) == 0
    fresh = iv("Alice", "member", "Club_C", "2014", None)
    assert store.add([fresh]) == 1
    assert store.has_relation("member") and store.facts(subject="Alice", time="2040") == [FACTS[11], fresh]
    assert store.relation_counts()["member"] == 6


def test_empty_store_for_the_backend(store_factory: StoreFactory) -> None:
    empty = store_factory([], labels={}, name="empty")
    assert len(empty) == 0 and list(empty) == [] and empty.facts(time="2015") == []
    assert empty.time_span() == (None, None) and empty.relation_counts() == {}
    assert empty.hop("A").n_facts == 0 and empty.incident("A") == []
    assert empty.add([FACTS[0]]) == 1 and empty.facts(subject="Alice") == at(0)


# --- as_of ----------------------------------------------------------------------------------------------
BEFORE_2012 = {10, 12, 13, 15, 22, 23, 24, 28}  # start before 2012-01-01 (open starts included)


def clipped(index: int, cut: str) -> Fact:
    """``FACTS[index]``, as a view cut at ``cut`` shows it (an end on or after the cutoff: open)."""
    f = FACTS[index]
    if f.end is not None and f.end.last_day >= P(cut).first_day:
        return Fact(f.subject, f.relation, f.object, f.start, None)
    return f


def clipped_at(cut: str, *indexes: int) -> list[Fact]:
    return [clipped(i, cut) for i in indexes]


def test_as_of_keeps_facts_starting_before_the_cutoff(store: KGStore) -> None:
    snap = store.as_of("2012")
    assert isinstance(snap, KGStore)
    assert len(snap) == len(BEFORE_2012) == snap.count()
    assert list(snap) == clipped_at("2012", *sorted(BEFORE_2012))  # insertion order, clipped
    assert snap.facts(subject="Alice") == clipped_at("2012", 10)  # the 2012 award starts on the cutoff: out
    assert store.as_of(P("2012")).facts() == snap.facts() == oracle(facts=snap)
    assert store.as_of("2015-03-21").facts(time="2015-03") == clipped_at("2015-03-21", 13, 15, 11, 4, 6)


def test_as_of_clips_intervals_at_the_cutoff(store: KGStore) -> None:
    """Nothing after the cutoff leaks: an end on or after it becomes open ("still true at the cutoff")."""
    snap = store.as_of("2012")
    assert all(f.end is None or f.end.last_day < P("2012").first_day for f in snap)
    # Alice's 2010-2012 membership was still running on 2012-01-01: its end is open in the view.
    assert snap.facts(subject="Alice") == [iv("Alice", "member", "Club_A", "2010", None)]
    assert snap.facts(subject="Dave") == [iv("Dave", "coach", "Club_A", "2009-09", None)]  # not 2015-06-30
    assert snap.facts(subject="Bob", time="1900") == at(12)  # ended 2011-06, before the cutoff: kept as is
    # A window after the cutoff meets exactly the facts still true at it (open ends run on forever).
    assert snap.facts(time="2030") == clipped_at("2012", 13, 15, 10, 24)  # 13: no time, meets every window
    assert snap.facts(time="2012-06") == snap.facts(time="2030")
    assert snap.facts(subject="Hank", time="2011") == clipped_at("2012", 24)
    # A month event straddling a day cutoff reads as begun that month and running; an open start with an
    # end after the cutoff loses its end (no time at all).
    assert store.as_of("2015-03-21").facts(subject="Alice", relation="meet") == [
        iv("Alice", "meet", "Bob", "2015-03", None)
    ]
    assert store.as_of("2011").facts(subject="Bob", relation="member") == [
        iv("Bob", "member", "Club_A", None, None)
    ]
    assert store.as_of("2011").hop("Bob", time="2025").n_facts == 1
    assert store.as_of("2011").time_span("Bob") == (None, None)
    # The live store is unchanged.
    assert store.facts(subject="Dave", relation="coach") == at(15)


def test_as_of_views_share_vocabulary_and_see_appends(store: KGStore) -> None:
    snap = store.as_of("2012")
    assert snap.live is store
    assert sorted(snap.entities) == ENTITIES and snap.has_entity("Erin")  # vocabulary is the live store's
    assert snap.label("Prize") == "The Prize"
    early, late = pt("Alice", "visit", "Spain", "2011-05-05"), pt("Alice", "visit", "Spain", "2013-01-01")
    store.add([early, late])
    assert snap.facts(subject="Alice") == [clipped(10, "2012"), early]
    assert late not in list(snap) and early in list(snap)
    with pytest.raises(ConfigError):
        snap.add([pt("Alice", "visit", "Spain", "2010")])


def test_nested_as_of_takes_the_earlier_cutoff(store: KGStore) -> None:
    assert store.as_of("2015").as_of("2012").facts() == store.as_of("2012").facts()
    assert store.as_of("2012").as_of("2015").facts() == store.as_of("2012").facts()
    assert store.as_of("2012").as_of("2015").live is store


def test_as_of_before_everything(store: KGStore) -> None:
    snap = store.as_of("1000")
    assert list(snap) == [iv("Bob", "member", "Club_A", None, None), FACTS[13]]  # clipped: no time left
    assert snap.time_span() == (None, None)


# --- time_span ------------------------------------------------------------------------------------------
def test_time_span(store: KGStore) -> None:
    # First: least start (2009-09 before 2009-09-01: same first day, coarser first). Last: latest last day
    # (2016 and 2016-12-31 tie on it: the later first day wins); open ends count by their start.
    assert store.time_span() == (P("2009-09"), P("2016-12-31"))
    assert store.time_span("Bob") == (P("2011-06-30"), P("2016"))
    assert store.time_span("Carol") == (P("2012-11"), P("2016"))
    assert store.time_span("Hank") == (P("2010-05"), P("2013"))
    assert store.time_span("Erin") == (P("2014-02-02"), P("2016-12-31"))
    assert store.time_span("Zed") == (None, None)
    # Clipped at the cutoff: 2009-09..2015-06-30 and 2011..2013 are open there, counting by their start.
    assert store.as_of("2012").time_span() == (P("2009-09"), P("2011"))
    assert store.as_of("2012").time_span("Alice") == (P("2010"), P("2010"))
    assert store.as_of("2012").time_span("Bob") == (P("2011-06-30"), P("2011-06-30"))


def test_time_span_of_atemporal_and_open_facts(store_factory: StoreFactory) -> None:
    kg = store_factory([iv("X", "r", "Y", None, None)], labels={}, name="t")
    assert kg.time_span() == (None, None) and kg.time_span("X") == (None, None)
    kg.add([iv("X", "r", "Z", None, "2001-02")])
    assert kg.time_span() == (None, P("2001-02"))
    kg.add([iv("X", "r", "W", "2000", None)])
    assert kg.time_span() == (P("2000"), P("2001-02"))
    kg.add([iv("Y", "r", "W", "2000-12", None)])  # open end: counts by its start, last day 2000-12-31
    assert kg.time_span() == (P("2000"), P("2001-02"))


# --- incident, hop, relation_counts -----------------------------------------------------------------------
def test_incident(store: KGStore) -> None:
    assert store.incident("Alice") == at(10, 17, 11, 2, 4, 0, 3, 1)
    assert store.incident("Erin") == at(20, 25, 21)  # the self-loop once
    assert store.incident("Alice", relation="visit") == at(2, 0, 3, 1)
    assert store.incident("Alice", time="2015-03") == at(11, 4, 0, 3)
    assert store.incident("Alice", relation="member", time="2030") == at(11)
    assert store.incident("Zed") == [] and store.incident("Alice", relation="nope") == []
    for e, r, t in product(ENTITIES, [None, *RELATIONS], [None, *TIMES]):
        want = [f for f in oracle(relation=r, time=t) if e in (f.subject, f.object)]
        assert store.incident(e, relation=r, time=t) == want, (e, r, t)


def test_hop_hand_checked(store: KGStore) -> None:
    step = store.hop(["Alice"])
    assert step.n_facts == 8
    assert step.relations == {"visit": 4, "meet": 1, "member": 2, "award": 1}
    assert step.neighbors == ("Bob", "France", "Club_A", "Club_B", "Germany", "Prize")  # ties by name
    assert store.hop("Alice") == step  # a single name is one entity
    new = store.hop(["Bob", "France"], visited=["Alice"], new_facts_only=True)
    assert new.n_facts == 10
    assert new.relations == {"meet": 1, "member": 2, "award": 1, "sign": 3, "visit": 2, "host": 1}
    assert new.neighbors == ("Germany", "Carol", "Club_A", "Prize", "Club_B")
    capped = store.hop(["Bob", "France"], visited=["Alice"], new_facts_only=True, max_neighbors=2)
    assert capped.neighbors == ("Germany", "Carol") and capped.n_facts == 10
    again = store.hop(["Bob", "France"], visited=["Alice"])  # facts back to Alice count again
    assert again.n_facts == 14 and "Alice" not in again.neighbors  # but Alice is no neighbour
    assert store.hop(["Bob", "France"], time="2015").n_facts == 6
    assert store.hop(["Alice"], max_neighbors=0).neighbors == ()
    assert store.hop(["Zed"]).n_facts == 0 and store.hop(["Zed", "Hank"]).n_facts == 2
    assert store.hop("Erin").n_facts == 3 and store.hop("Erin").neighbors == ("Dave", "Frank")


def hop_oracle(
    frontier: set[str], visited: set[str], new_only: bool, time: TimeQuery
) -> tuple[int, dict[str, int], tuple[str, ...]]:
    met = [f for f in oracle(time=time) if f.subject in frontier or f.object in frontier]
    if new_only:
        met = [f for f in met if f.subject not in visited and f.object not in visited]
    ends = Counter(e for f in met for e in (f.subject, f.object) if e not in frontier | visited)
    return len(met), dict(Counter(f.relation for f in met)), tuple(sorted(ends, key=lambda e: (-ends[e], e)))


@pytest.mark.parametrize(
    ("frontier", "visited"),
    [
        ({"Alice"}, set()),
        ({"Bob", "France"}, {"Alice"}),
        ({"Dave", "Club_A"}, {"Carol", "Erin"}),
        (set(), set()),
    ],
)
def test_hop_matches_the_oracle(store: KGStore, frontier: set[str], visited: set[str]) -> None:
    for new_only, time in product((False, True), [None, *TIMES]):
        step = store.hop(frontier, visited=visited, new_facts_only=new_only, time=time)
        assert (step.n_facts, step.relations, step.neighbors) == hop_oracle(frontier, visited, new_only, time)


def test_relation_counts(store: KGStore) -> None:
    assert store.relation_counts() == dict(Counter(f.relation for f in FACTS))
    assert store.relation_counts("Alice") == {"visit": 4, "meet": 1, "member": 2, "award": 1}
    assert store.relation_counts("Erin") == {"praise": 1, "meet": 1, "visit": 1}
    assert store.relation_counts("Zed") == {}
    early = {"member": 3, "spouse": 1, "coach": 1, "visit": 1, "meet": 1, "sign": 1}
    assert store.as_of("2012").relation_counts() == early
    assert store.as_of("2012").relation_counts("Bob") == {"member": 1, "sign": 1}


# --- ARI operators and neighbourhood functions: identical to the reference store -------------------------
def _same(got: Any, want: Any, what: object) -> None:
    assert got == want, what


def test_ari_entity_operators_match_the_reference(store: KGStore, reference: KGStore) -> None:
    for s, r, t, both in product(ENTITIES, RELATIONS, [None, *TIMES], (False, True)):
        for op in (get_tail_entity, get_head_entity):
            want = op(reference, s, r, t, both_directions=both)
            _same(op(store, s, r, t, both_directions=both), want, (op.__name__, s, r, t, both))
    for f, both in product(FACTS, (False, True)):
        args = (f.subject, f.relation, f.object)
        _same(
            get_time(store, *args, both_directions=both), get_time(reference, *args, both_directions=both), f
        )


def test_ari_temporal_filters_match_the_reference(store: KGStore, reference: KGStore) -> None:
    points: list[str | TimePoint | Interval] = [
        "2012",
        "2012-11",
        "2015-03-21",
        P("2014"),
        Interval.parse("2015"),
    ]
    for e in ENTITIES:
        mine, ref = store.incident(e), reference.incident(e)
        _same(get_first(mine), get_first(ref), e)
        _same(get_last(mine), get_last(ref), e)
        for t in points:
            _same(get_before(mine, t), get_before(ref, t), (e, t))
            _same(get_after(mine, t), get_after(ref, t), (e, t))
            _same(get_between(mine, "2011", t), get_between(ref, "2011", t), (e, t))


@pytest.mark.parametrize("cutoff", [None, "2013", "2015-03-21"])
def test_neighbourhood_functions_match_the_reference(
    store: KGStore, reference: KGStore, cutoff: str | None
) -> None:
    mine, ref = (store, reference) if cutoff is None else (store.as_of(cutoff), reference.as_of(cutoff))
    for e in ENTITIES:
        _same(subgraph(mine, e), subgraph(ref, e), e)
        _same(subgraph(mine, e, limit=2), subgraph(ref, e, limit=2), e)
        _same(neighbors(mine, e), neighbors(ref, e), e)
        _same(entity_lifetime(mine, e), entity_lifetime(ref, e), e)
        for t in (None, "2015", "2012-11"):
            _same(subgraph(mine, e, time=t), subgraph(ref, e, time=t), (e, t))
            _same(neighbors(mine, e, time=t), neighbors(ref, e, time=t), (e, t))
        for hops, t, cap in product((1, 2, 4), (None, "2012-2015"), (1, 2000)):
            want = relations_by_hop(ref, e, hops, time=t, max_frontier=cap)
            _same(relations_by_hop(mine, e, hops, time=t, max_frontier=cap), want, (e, hops, t, cap))


def test_neighbourhood_hand_checked(store: KGStore) -> None:
    assert subgraph(store, "Erin") == at(20, 25, 21)
    assert neighbors(store, "Alice") == ["Bob", "France", "Club_A", "Club_B", "Germany", "Prize"]
    assert relations_by_hop(store, "Gina", 4) == {
        1: ["meet", "visit"],
        2: ["member"],
        3: ["praise"],
        4: ["coach", "spouse"],
    }
    assert entity_lifetime(store, "Alice").to_dict() == {
        "entity": "Alice",
        "first": "2010",
        "last": "2015-04-02",
        "n_facts": 8,
    }


# --- random KGs: the backend answers as the reference does -------------------------------------------------
_WHEN = ["2010", "2010-05", "2010-05-17", "2011", "2011-12-31", "2012-02", "2012-02-29", "2013"]
_bound = st.one_of(st.none(), st.sampled_from(_WHEN))


@st.composite
def random_facts(draw: st.DrawFn) -> list[Fact]:
    out = []
    for _ in range(draw(st.integers(0, 25))):
        s, o = draw(st.sampled_from("abcde")), draw(st.sampled_from("abcde"))
        r = draw(st.sampled_from(["r", "s", "t"]))
        start, end = draw(_bound), draw(st.one_of(st.just("="), _bound))  # end < start is allowed too
        out.append(iv(s, r, o, start, start if end == "=" else end))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(facts=random_facts(), split=st.integers(0, 25), cut=st.sampled_from(_WHEN))
def test_random_kgs_match_the_reference(
    store_factory: StoreFactory, facts: list[Fact], split: int, cut: str
) -> None:
    store = store_factory(facts[:split], labels={}, name="rand")
    store.add(facts[split:])
    ref = ListStore(facts)
    _agree(store, ref)
    _agree(store.as_of(cut), ref.as_of(cut))


def _agree(store: KGStore, ref: KGStore) -> None:
    assert len(store) == len(ref) and list(store) == list(ref)
    assert store.time_span() == ref.time_span() and store.relation_counts() == ref.relation_counts()
    for time in (None, *_WHEN, "2010-2011", "2012-03"):
        assert store.facts(time=time) == ref.facts(time=time)
        for e in "abcde":
            assert store.facts(subject=e, time=time) == ref.facts(subject=e, time=time)
            assert store.facts(relation="r", object=e, time=time) == ref.facts(
                relation="r", object=e, time=time
            )
            assert store.incident(e, time=time) == ref.incident(e, time=time)
            assert store.hop(e, visited={"a", "b"}, time=time) == ref.hop(e, visited={"a", "b"}, time=time)
    for e in "abcde":
        assert store.time_span(e) == ref.time_span(e) and store.relation_counts(e) == ref.relation_counts(e)
        assert store.hop({e, "a"}, visited={"b"}, new_facts_only=True) == ref.hop(
            {e, "a"}, visited={"b"}, new_facts_only=True
        )
