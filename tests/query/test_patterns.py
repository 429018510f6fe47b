"""Pattern grounding (tkgqa.query.generate.patterns): every pattern built as the one typed program and
computed by its executor; answer sets (tkgqa.query.program.answer_sets)."""

from __future__ import annotations

import pytest

from tkgqa.kg import Fact, TemporalKG
from tkgqa.query.generate import patterns as pt
from tkgqa.query.generate.grounding import GroundingConfig, ground
from tkgqa.query.generate.patterns import Instance, PatternType, asks_time
from tkgqa.query.program import nodes as pn
from tkgqa.query.program.answer_sets import (
    AnswerSet,
    CompareMode,
    Support,
    ValueKind,
    compare,
    intersect,
    pick,
    time_filter,
    union,
)
from tkgqa.query.program.executor import Executor
from tkgqa.time import Extreme, Interval, TemporalRelation, TimePoint, parse_time


def evaluate(kg: TemporalKG, steps: tuple[pt.PatternNode, ...]) -> list[AnswerSet]:
    """Every step's answers: its typed program run by the executor."""
    return [Executor(kg).answer_set(p) for p in pt.programs(steps)]


def F(s: str, r: str, o: str, start: str, end: str | None = None) -> Fact:
    return Fact(s, r, o, parse_time(start), parse_time(end or start))


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG(
        [
            F("Baggio", "member_of", "Fiorentina", "1985", "1990"),
            F("Baggio", "member_of", "Juventus", "1990", "1995"),
            F("Baggio", "member_of", "Milan", "1995", "1997"),
            F("Maldini", "member_of", "Milan", "1985", "2009"),
            F("Obama", "visit", "China", "2009-11-15"),
            F("Obama", "visit", "China", "2014-11-10"),
            F("Merkel", "visit", "China", "2014-07-06"),
            F("Putin", "visit", "China", "2014-05-20"),
            F("Merkel", "visit", "India", "2015-10-04"),
            F("Obama", "visit", "India", "2015-01-25"),
            F("China", "host", "Obama", "2014-11-10"),
        ]
    )


def test_hop_and_set_operations(kg: TemporalKG) -> None:
    nodes = (
        pt.Projection("China", "visit", inverse=True),
        pt.Projection("India", "visit", inverse=True),
        pt.SetOp(pn.SetOperation.AND, (0, 1)),
    )
    china, india, both = evaluate(kg, nodes)
    assert set(china.values()) == {"Obama", "Merkel", "Putin"}
    assert china.values()[0] == "Obama"  # most supporting facts first
    assert set(both.values()) == {"Obama", "Merkel"}
    assert all(f.object in {"China", "India"} for f in both.facts())
    assert set(union([china, india]).values()) == {"Obama", "Merkel", "Putin"}
    assert intersect([]).values() == []


def test_temporal_nodes_use_the_one_time_semantics(kg: TemporalKG) -> None:
    # Baggio's club before he joined Milan (1995): Juventus 1990–1995 starts before 1995, so it is kept
    nodes = (
        pt.WhenQ("Baggio", "member_of", "Milan"),
        pt.Projection("Baggio", "member_of"),
        pt.TimeFilter(1, TemporalRelation.BEFORE, 0),
    )
    assert set(evaluate(kg, nodes)[-1].values()) == {"Fiorentina", "Juventus"}
    in_nov = (
        pt.Projection("China", "visit", True),
        pt.TimeFilter(0, TemporalRelation.IN, TimePoint(2014, 11)),
    )
    assert evaluate(kg, in_nov)[-1].values() == ["Obama"]
    first = evaluate(kg, (pt.Projection("China", "visit", True), pt.Pick(0, Extreme.FIRST)))[-1]
    assert first.values() == ["Obama"]  # 2009
    last_time = evaluate(kg, (pt.WhenQ("Obama", "visit", "China"), pt.Pick(0, Extreme.LAST)))[-1]
    assert last_time.kind is ValueKind.TIME and last_time.values() == ["2014-11-10"]
    between = (
        pt.Projection("China", "visit", True),
        pt.TimeFilter(0, TemporalRelation.IN, TimePoint(2014, 5), TimePoint(2014, 7)),
    )
    assert set(evaluate(kg, between)[-1].values()) == {"Putin", "Merkel"}


def test_compare_picks_the_earlier_or_later_candidate(kg: TemporalKG) -> None:
    nodes = (
        pt.WhenQ("Merkel", "visit", "China"),
        pt.WhenQ("Putin", "visit", "China"),
        pt.Compare((0, 1), ("Merkel", "Putin"), CompareMode.EARLIER),
    )
    assert evaluate(kg, nodes)[-1].values() == ["Putin"]
    later = (*nodes[:2], pt.Compare((0, 1), ("Merkel", "Putin"), CompareMode.LATER))
    assert evaluate(kg, later)[-1].values() == ["Merkel"]
    numbers = [
        ("a", AnswerSet(ValueKind.ENTITY, (Support("12,000,000 USD", ()),))),
        ("b", AnswerSet(ValueKind.ENTITY, (Support("3,500", ()),))),
    ]
    assert compare(numbers, CompareMode.MORE).values() == ["a"]
    assert compare(numbers, CompareMode.LESS).values() == ["b"]
    assert compare([], CompareMode.MORE).values() == []


def test_answer_set_time_operations_on_time_values() -> None:
    times = AnswerSet(
        ValueKind.TIME, (Support("2014-05", ()), Support("2012", ()), Support("not a time", ()))
    )
    assert times.earliest() == TimePoint(2012)
    assert pick(times, Extreme.LAST).values() == ["2014-05"]
    assert time_filter(times, TemporalRelation.AFTER, TimePoint(2013)).values() == ["2014-05"]
    assert time_filter(times, TemporalRelation.IN, Interval(TimePoint(2011), TimePoint(2012))).values() == [
        "2012"
    ]


def test_grounding_is_seeded_deduplicated_and_answers_are_correct(demo_kg: TemporalKG) -> None:
    cfg = GroundingConfig(per_pattern=4, seed=3, max_answers=6)
    a, b = ground(demo_kg, cfg), ground(demo_kg, cfg)
    assert [i.to_dict() for i in a.instances] == [i.to_dict() for i in b.instances]
    assert set(a.counts) == {str(p) for p in PatternType}
    for p in PatternType:
        got = [i for i in a.instances if i.pattern is p]
        assert len(got) == a.counts[str(p)] and len({i.key() for i in got}) == len(got)
    assert sum(a.counts.values()) >= 3 * len(PatternType)  # the demo KG grounds (nearly) every pattern
    for inst in a.instances:
        assert 1 <= len(inst.answers) <= 6
        assert evaluate(demo_kg, inst.nodes)[-1].values() == list(inst.answers)
        assert Instance.from_dict(inst.to_dict()) == inst
        assert inst.entities()


def test_every_pattern_is_one_typed_program(demo_kg: TemporalKG) -> None:
    """All 18 patterns are built as typed programs; the executor's ranked, labelled answers are the gold
    answers, and the program survives its JSON form."""
    res = ground(demo_kg, GroundingConfig(per_pattern=8, seed=1))
    assert {inst.pattern for inst in res.instances} == set(PatternType)
    for inst in res.instances:
        program = inst.program()
        gold = {a if inst.kind is ValueKind.TIME else demo_kg.label(a) for a in inst.answers}
        assert set(Executor(demo_kg).run(program).answers) == gold, (inst, program)
        assert pn.from_dict(pn.to_dict(program)) == program


def test_pattern_programs_read_as_the_pattern() -> None:
    first, chain = pt.programs(pt.SKELETONS[PatternType.P2])
    assert str(first) == "entities(exclude(match(a, r, ?), a))"
    assert str(chain) == "entities(hop(exclude(match(a, r, ?), a), r))"
    union = pt.programs(pt.SKELETONS[PatternType.U2])[-1]
    assert str(union).startswith("entities(or(exclude(match(a, r, ?), a), exclude(match(b, r, ?), b)")
    between = pt.programs(pt.SKELETONS[PatternType.BETWEEN])[-1]
    assert "in(exclude(match(a, r, ?), a), 2000..2001)" in str(between)
    compare_ = pt.programs(pt.SKELETONS[PatternType.COMPARE])[-1]
    assert str(compare_) == "entities(compare(earlier, a: match(a, r, o), b: match(b, r, o)))"


def test_grounding_config_limits(demo_kg: TemporalKG) -> None:
    cfg = GroundingConfig(patterns=(PatternType.P2,), per_pattern=5, max_answers=1, max_fanout=1, seed=1)
    res = ground(demo_kg, cfg)
    assert set(res.counts) == {"2p"}
    for inst in res.instances:
        sets = evaluate(demo_kg, inst.nodes)
        assert len(sets[0]) == 1 and len(sets[-1]) == 1


def test_node_dicts_round_trip_and_bad_nodes_are_data_errors() -> None:
    from tkgqa.errors import DataError

    nodes: list[pt.PatternNode] = [
        pt.Projection(0, "r", True), pt.WhenQ("a", "r", "b"), pt.SetOp(pn.SetOperation.OR, (0, 1)),
        pt.TimeFilter(0, TemporalRelation.IN, TimePoint(2012, 5), TimePoint(2012, 8)),
        pt.Pick(1, Extreme.LAST),
        pt.Compare((0, 1), ("a", "b"), CompareMode.LATER),
    ]  # fmt: skip
    for n in nodes:
        assert pt.node_from_dict(pt.node_to_dict(n)) == n
    with pytest.raises(DataError):
        pt.node_from_dict({"node": "teleport"})
    with pytest.raises(DataError):
        pt.node_from_dict({"node": "hop"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("When did Obama visit China?", True),
        ("In which year did X last visit Iraq?", True),
        ("what month was it", True),
        ("On what date did it happen?", True),
        ("Who visited China?", False),
        ("Whom did China criticize in 2012?", False),
    ],
)
def test_asks_time(text: str, expected: bool) -> None:
    assert asks_time(text) is expected


def test_grounding_needs_usable_facts() -> None:
    from tkgqa.errors import DataError

    with pytest.raises(DataError):
        ground(TemporalKG([Fact("Q1", "P2", "Q3", TimePoint(2000), TimePoint(2000))]))
