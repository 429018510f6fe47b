"""One time semantics through every path: the executor, the ARI operators, ARI's compiled actions, ARI's
symbolic policy, φ_t reranking and the KG-supported diagnostic agree (issue #9's Baggio reproduction)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tkgqa.datasets import Question
from tkgqa.kg import Fact, TemporalKG, get_after, get_before, get_between, get_during, get_first, get_last
from tkgqa.methods.ari.actions import Action, Item, filter_items
from tkgqa.methods.ari.agent import run_episode
from tkgqa.methods.ari.environment import ARIEnvironment
from tkgqa.methods.ari.symbolic_policy import SymbolicPolicy
from tkgqa.methods.symbolic import SymbolicReasoner
from tkgqa.query import (
    Const,
    Entities,
    Executor,
    Filter,
    Match,
    QuestionLinker,
    Select,
    TemporalRelation,
    TimeOf,
    holds,
)
from tkgqa.retrieval.similarity import Similarity
from tkgqa.retrieval.temporal import PAPER_PENALTY, TimeConstraint, time_scores
from tkgqa.time import Granularity, Interval, TimePoint

TEAM = "member of sports team"
SPELLS = [
    ("Vicenza", 1982, 1985),
    ("Fiorentina", 1985, 1990),
    ("Juventus", 1990, 1995),
    ("AC Milan", 1995, 1997),
    ("Bologna", 1997, 1998),
]


def baggio_kg() -> TemporalKG:
    facts = [Fact("Roberto Baggio", TEAM, club, TimePoint(a), TimePoint(b)) for club, a, b in SPELLS]
    return TemporalKG(facts, name="baggio")


def answers_of_executor(kg: TemporalKG, op: str, ref: TimeOf | Const) -> set[str]:
    program = Entities(Filter(Match("Roberto Baggio", TEAM, None), op, ref))
    return {kg.label(a) for a in Executor(kg).run(program).answers}


def test_the_baggio_program_gives_the_same_clubs_through_every_path() -> None:
    kg = baggio_kg()
    facts = kg.facts(subject="Roberto Baggio", relation=TEAM)
    milan = TimeOf(Match("Roberto Baggio", TEAM, "AC Milan"))  # AC Milan began in 1995
    expected_before = {"Vicenza", "Fiorentina", "Juventus"}  # began before 1995 (Juventus: 1990–1995)
    expected_after = {"Bologna"}

    assert answers_of_executor(kg, "before", milan) == expected_before
    assert {f.object for f in get_before(facts, "1995")} == expected_before
    items = [Item(f.object, f) for f in facts]
    assert {it.value for it in filter_items(items, Action("get_before", time=TimePoint(1995)))} == (
        expected_before
    )
    scores = time_scores(TimeConstraint.of("before", "1995"), facts)
    assert {f.object for f, s in zip(facts, scores, strict=True) if s != PAPER_PENALTY} == expected_before
    y1995 = TimePoint(1995)
    support = TimeConstraint(TemporalRelation.BEFORE, y1995, "1995")  # the diagnostic's constraint
    assert {f.object for f in facts if support.admits(f.start, f.end)} == expected_before

    assert answers_of_executor(kg, "after", milan) == expected_after
    assert {f.object for f in get_after(facts, "1995")} == expected_after
    assert {it.value for it in filter_items(items, Action("get_after", time=TimePoint(1995)))} == (
        expected_after
    )


def test_the_team_before_ac_milan_is_juventus_in_the_method_and_in_aris_agent() -> None:
    kg = baggio_kg()
    milan = TimeOf(Match("Roberto Baggio", TEAM, "AC Milan"))
    program = Entities(Select(Filter(Match("Roberto Baggio", TEAM, None), "before", milan), "last"))
    via_method = SymbolicReasoner().execute(program, kg)
    assert via_method.answers == ["Juventus"]

    question = Question(qid="baggio", text="Which team did Roberto Baggio play for before AC Milan?")
    linked = QuestionLinker.anchors().link(question, kg)
    env = ARIEnvironment(kg, linked.anchors, Similarity(question.text, None))
    episode = run_episode(question, env, SymbolicPolicy(program))
    assert episode.answers[:1] == ["Juventus"]


def test_operators_and_executor_share_first_last_and_between() -> None:
    kg = baggio_kg()
    facts = kg.facts(subject="Roberto Baggio", relation=TEAM)
    assert [f.object for f in get_first(facts)] == ["Vicenza"]
    assert [f.object for f in get_last(facts)] == ["Bologna"]
    first = Entities(Select(Match("Roberto Baggio", TEAM, None), "first"))
    assert Executor(kg).run(first).answers == ["Vicenza"]
    assert {f.object for f in get_between(facts, "1985", "1995")} == {"Fiorentina", "Juventus"}
    assert {f.object for f in get_during(facts, "1990")} == {"Fiorentina", "Juventus"}


def test_a_mistyped_filter_op_is_a_config_error() -> None:
    import pytest

    from tkgqa.errors import ConfigError

    with pytest.raises(ConfigError, match=r"unknown value 'befor'.*before"):
        Filter(Match("A", "r", None), "befor", Const(TimePoint(2000)))
    with pytest.raises(ConfigError, match="temporal relation: unknown value"):
        TemporalRelation.parse("during-ish")


# --- property: every path applies the same predicate ---------------------------------------------------
_GRAN = st.sampled_from([Granularity.YEAR, Granularity.MONTH, Granularity.DAY])


@st.composite
def points(draw: st.DrawFn) -> TimePoint:
    year = draw(st.integers(1990, 1996))
    gran = draw(_GRAN)
    if gran == Granularity.YEAR:
        return TimePoint(year)
    month = draw(st.integers(1, 12))
    return (
        TimePoint(year, month)
        if gran == Granularity.MONTH
        else TimePoint(year, month, draw(st.integers(1, 28)))
    )


@st.composite
def facts(draw: st.DrawFn) -> Fact:
    start = draw(points())
    kind = draw(st.sampled_from(["point", "interval", "open"]))
    if kind == "point":
        return Fact("s", "r", "o", start, start)
    if kind == "open":
        return Fact("s", "r", "o", start, None)
    end = draw(points())
    return (
        Fact("s", "r", "o", start, end)
        if end.first_day >= start.first_day
        else Fact("s", "r", "o", end, start)
    )


@given(st.lists(facts(), min_size=1, max_size=6, unique=True), points())
def test_operators_actions_and_executor_agree_with_holds(fs: list[Fact], ref: TimePoint) -> None:
    kg = TemporalKG(fs, name="prop")
    stored = kg.facts(subject="s", relation="r")
    items = [Item("o", f) for f in stored]
    for relation, op, kind in (
        (TemporalRelation.BEFORE, get_before, "get_before"),
        (TemporalRelation.AFTER, get_after, "get_after"),
    ):
        want = [f for f in stored if holds(relation, f.start, f.end, ref)]
        assert op(stored, ref) == want
        assert [it.fact for it in filter_items(items, Action(kind, time=ref))] == want
        program = Entities(Filter(Match("s", "r", None), relation, Const(ref)))
        assert bool(Executor(kg).run(program).answers) == bool(want)
    assert get_during(stored, ref) == [f for f in stored if holds(TemporalRelation.IN, f.start, f.end, ref)]
    span = Interval(ref, TimePoint(1997))
    assert get_between(stored, ref, "1997") == [
        f for f in stored if holds(TemporalRelation.WITHIN, f.start, f.end, span)
    ]
