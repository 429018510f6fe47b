"""The in-memory store: lookups with time windows, appends, compaction, snapshots, arrays round trip."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tkgqa.errors import ConfigError, NotFoundError
from tkgqa.kg import Fact, KGStore, TemporalKG
from tkgqa.kg.base import clip_at
from tkgqa.time import Granularity, Interval, TimePoint, intersects, parse_time

P = TimePoint.of


FACTS = [
    Fact.of("A", "visit", "B", "2015-03-21"),
    Fact.of("A", "visit", "C", "2015-04-02"),
    Fact.of("A", "visit", "B", "2014-12-31"),
    Fact.of("A", "meet", "B", "2015-03"),
    Fact.of("B", "visit", "A", "2016"),
    Fact.of("A", "member", "Club", "2010", "2012"),
    Fact.of("A", "member", "Club2", "2013-07", None),
    Fact.of("C", "spouse", "D", None, None),
]


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG(FACTS, name="toy")


def test_protocol_and_vocabulary(kg: TemporalKG) -> None:
    assert isinstance(kg, KGStore)
    assert len(kg) == len(FACTS)
    assert set(kg.entities) == {"A", "B", "C", "D", "Club", "Club2"}
    assert kg.has_entity("A") and not kg.has_entity("Z") and kg.has_relation("visit")
    assert kg.label("Club_(Thailand)") == "Club (Thailand)"
    with pytest.raises(NotFoundError):
        kg.entity_id("Z")
    with pytest.raises(NotFoundError):
        kg.relation_id("nope")


def test_lookups_are_ordered_by_start(kg: TemporalKG) -> None:
    got = kg.facts(subject="A", relation="visit")
    assert [f.start for f in got] == [P("2014-12-31"), P("2015-03-21"), P("2015-04-02")]
    assert kg.facts(subject="A", object="B") == [FACTS[2], FACTS[3], FACTS[0]]
    assert kg.facts(relation="visit", object="A") == [FACTS[4]]
    assert kg.count() == len(FACTS)
    assert kg.facts(subject="A", relation="visit", limit=1) == [FACTS[2]]
    assert kg.facts(subject="Z") == [] and kg.facts(relation="nope") == []


@pytest.mark.parametrize(
    ("time", "expected"),
    [
        ("2015", {0, 1, 3, 6}),  # day, month and open-interval facts inside/overlapping 2015
        ("2015-03", {0, 3, 6}),
        ("Mar 2015", {0, 3, 6}),
        ("2015-03-21", {0, 3, 6}),  # the month fact 2015-03 contains the day
        ("2011", {5}),
        ("2012-12-31", {5}),
        ("2013", {6}),
        ("2009", set()),
        ("2010-2011", {5}),
    ],
)
def test_time_windows_honour_granularity(kg: TemporalKG, time: str, expected: set[int]) -> None:
    got = kg.facts(subject="A", time=time)
    assert {FACTS.index(f) for f in got} == expected
    assert kg.count(subject="A", time=time) == len(expected)
    assert kg.facts(subject="A", time=Interval.parse(time)) == got


def test_atemporal_facts_match_every_window(kg: TemporalKG) -> None:
    assert kg.facts(subject="C", time="1800") == [FACTS[7]]


def test_time_span_and_relation_counts(kg: TemporalKG) -> None:
    assert kg.time_span() == (P("2010"), P("2016"))
    assert kg.relation_counts() == {"visit": 4, "meet": 1, "member": 2, "spouse": 1}
    assert TemporalKG().time_span() == (None, None)
    # The latest end may belong to a fact whose end is open: it then counts by its start.
    late = TemporalKG([Fact.of("X", "r", "Y", "2000", "2001"), Fact.of("X", "r", "Z", "2005", None)])
    assert late.time_span() == (P("2000"), P("2005"))


def test_appends_are_visible_at_once_and_after_compaction(kg: TemporalKG) -> None:
    new = Fact.of("A", "visit", "E", "2015-03-25")
    assert kg.add([new, new, FACTS[0]]) == 1
    assert len(kg) == len(FACTS) + 1
    got = kg.facts(subject="A", relation="visit", time="2015-03")
    assert got == [FACTS[0], new]
    assert kg.facts(subject="A", object="E") == [new]
    assert kg.facts(relation="visit", time="2015-03-25") == [new]
    interval_new = Fact.of("A", "member", "Club3", "2014", "2016")
    kg.add([interval_new])
    assert interval_new in kg.facts(subject="A", time="2015-06")
    # Appended facts are merged into start-time order.
    starts = [f.start.first_day for f in kg.facts(subject="A") if f.start]
    assert starts == sorted(starts)
    before = kg.facts(subject="A")
    kg.compact()
    assert kg.facts(subject="A") == before
    assert kg.facts(subject="A", relation="visit", time="2015-03") == [FACTS[0], new]


def test_many_appends_trigger_compaction() -> None:
    kg = TemporalKG([Fact.of("A", "r", "B", "2000-01-01")])
    day0 = P("2000-01-01").first_day
    batch = [Fact("A", "r", f"E{i}", TimePoint.from_ordinal(day0 + i), None) for i in range(60_000)]
    assert kg.add(batch) == 60_000
    assert not kg._st.delta  # folded into the columns
    assert kg.count(subject="A") == 60_001
    assert kg.facts(subject="A", object="E59999") == [batch[-1]]


def test_snapshots(kg: TemporalKG) -> None:
    snap = kg.as_of("2015-03")
    assert isinstance(snap, KGStore)
    assert {FACTS.index(f) for f in snap.facts(subject="A")} == {2, 5, 6}  # start before 2015-03-01
    assert snap.count(subject="A", relation="visit") == 1
    assert len(snap) == 4  # also the atemporal fact (open start)
    kg.add([Fact.of("A", "visit", "F", "2014-06-01"), Fact.of("A", "visit", "G", "2016-01-01")])
    assert [f.object for f in snap.facts(subject="A", relation="visit")] == ["F", "B"]
    kg.compact()
    assert [f.object for f in snap.facts(subject="A", relation="visit")] == ["F", "B"]
    nested = snap.as_of("2020")
    assert nested.cutoff == P("2015-03")
    assert snap.as_of("2014").count(subject="A", relation="visit") == 0
    with pytest.raises(ConfigError, match="read-only"):
        snap.add([FACTS[0]])
    assert snap.label("A") == "A" and snap.has_entity("A") and snap.has_relation("visit")
    assert snap.time_span()[0] == P("2010")


def test_arrays_round_trip(kg: TemporalKG) -> None:
    kg.add([Fact.of("Q", "visit", "A", "2017-01-01")])
    ents, rels, cols, index = kg.to_arrays()
    for given_index in (index, {k: index[k] for k in ("sr_ids", "t_ids")}, None):  # whole, partial, none
        copy = TemporalKG.from_arrays(ents, rels, cols, labels={"A": "Alpha"}, name="copy", index=given_index)
        assert list(copy) == list(kg)
        assert copy.facts(subject="A", time="2015") == kg.facts(subject="A", time="2015")
        assert copy.label("A") == "Alpha"
        # The dedup set is rebuilt lazily: re-adding is a no-op, new facts are appended.
        assert copy.add([FACTS[0]]) == 0 and copy.add([Fact.of("Z", "r", "A", "2001")]) == 1
        assert copy.facts(subject="Z") == [Fact.of("Z", "r", "A", "2001")]


def test_fact_objects_are_cached(kg: TemporalKG) -> None:
    a = kg.facts(subject="A")
    assert all(x is y for x, y in zip(a, kg.facts(subject="A"), strict=True))
    ents, rels, cols, _ = kg.to_arrays()
    fresh = TemporalKG.from_arrays(ents, rels, cols)
    assert fresh.facts(subject="B") == kg.facts(subject="B")  # partly built
    fresh.materialize(batch=3)
    assert list(fresh) == list(kg)
    assert fresh.facts(subject="A", time="2015") == kg.facts(subject="A", time="2015")  # all built
    extra = Fact.of("A", "visit", "Z", "2015-05-05")
    fresh.add([extra])
    assert extra in fresh.facts(subject="A", time="2015")
    assert fresh.facts_by_ids([0, 1]) == fresh.facts_by_ids(np.array([0, 1]))


def test_incident_ids(kg: TemporalKG) -> None:
    ids = kg.incident_ids(np.array([kg.entity_id("B")]))
    assert {kg.fact(int(i)) for i in ids} == {FACTS[0], FACTS[2], FACTS[3], FACTS[4]}
    span = (P("2015").first_day, P("2015").last_day)
    ids = kg.incident_ids(np.array([kg.entity_id("B")]), span=span, cutoff=P("2015-03-15").first_day)
    assert [kg.fact(int(i)) for i in ids] == [FACTS[3]]


def test_negative_duration_facts_do_not_break_windows() -> None:
    odd = Fact("A", "r", "B", P("2015"), P("2010"))  # malformed upstream: start after end
    kg = TemporalKG([odd, Fact.of("A", "r", "C", "2015-06-01")])
    assert kg.facts(subject="A", time="2015-06") == [Fact.of("A", "r", "C", "2015-06-01")]


# --- property: indexed search == brute force --------------------------------------------------------------
DAY0 = P("2015-01-01").first_day


@st.composite
def random_facts(draw: st.DrawFn) -> Fact:
    s, o = draw(st.sampled_from("ABCD")), draw(st.sampled_from("ABCD"))
    r = draw(st.sampled_from(["x", "y"]))
    kind = draw(
        st.sampled_from(["day", "day", "month", "year", "interval", "open_end", "open_start", "none"])
    )
    d = TimePoint.from_ordinal(DAY0 + draw(st.integers(-400, 800)))
    if kind == "day":
        return Fact(s, r, o, d, d)
    if kind in {"month", "year"}:
        p = d.coarsen(Granularity.MONTH if kind == "month" else Granularity.YEAR)
        return Fact(s, r, o, p, p)
    e = TimePoint.from_ordinal(d.first_day + draw(st.integers(0, 500)))
    return {"interval": Fact(s, r, o, d, e), "open_end": Fact(s, r, o, d, None)}.get(
        kind, Fact(s, r, o, None, e) if kind == "open_start" else Fact(s, r, o, None, None)
    )


windows = st.sampled_from(
    ["2014", "2015", "2016", "2015-03", "2015-12", "2014-02-02", "2015-07-14", "2015-2016"]
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(random_facts(), max_size=40),
    st.lists(random_facts(), max_size=10),
    st.sampled_from([None, "A", "B"]),
    st.sampled_from([None, "x"]),
    st.sampled_from([None, "C"]),
    st.one_of(st.none(), windows),
    st.one_of(st.none(), st.sampled_from(["2015-02", "2016"])),
)
def test_indexed_search_equals_brute_force(
    base: list[Fact],
    appended: list[Fact],
    s: str | None,
    r: str | None,
    o: str | None,
    time: str | None,
    cutoff: str | None,
) -> None:
    kg = TemporalKG(base)
    kg.add(appended)
    unique = list(dict.fromkeys(base + appended))
    cut = parse_time(cutoff).first_day if cutoff else None
    want = Interval.parse(time) if time else None

    def keep(f: Fact) -> bool:
        if (s and f.subject != s) or (r and f.relation != r) or (o and f.object != o):
            return False
        if want is not None and not intersects(f.interval, want):
            return False
        return cut is None or f.interval.first_day < cut

    # An as_of view shows the facts starting before the cutoff, clipped at it (an end on or after it: open).
    shown = unique if cut is None else [clip_at(f, cut) for f in unique if f.interval.first_day < cut]
    expected = [f for f in shown if keep(f)]
    store = kg if cutoff is None else kg.as_of(cutoff)
    got = store.facts(s, r, o, time)
    assert sorted(got, key=str) == sorted(expected, key=str)
    starts = [f.interval.first_day for f in got]
    assert starts == sorted(starts)
    kg.compact()
    assert sorted(store.facts(s, r, o, time), key=str) == sorted(expected, key=str)
