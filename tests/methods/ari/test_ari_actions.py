"""ARI actions, agent state and the knowledge-based environment (enumeration + filtration) on a tiny KG."""

from __future__ import annotations

import pytest

from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods.ari.actions import (
    Action,
    AgentState,
    Item,
    answer_candidates,
    execute,
    filter_items,
    format_items,
    ranked_values,
)
from tkgqa.methods.ari.environment import ARIEnvironment, FilterSettings
from tkgqa.query import QuestionAnchors
from tkgqa.retrieval.similarity import Similarity
from tkgqa.time import parse_time

FACTS = [
    Fact.of("Alice", "Visit", "Freedonia", "2010-01-05"),
    Fact.of("Bob", "Visit", "Freedonia", "2011-03-02"),
    Fact.of("Carol", "Visit", "Freedonia", "2012-07-20"),
    Fact.of("Bob", "Visit", "Freedonia", "2013-02-11"),
    Fact.of("Alice", "Criticize", "Freedonia", "2012-08-01"),
    Fact.of("Freedonia", "Sign agreement", "Sylvania", "2011-05-05"),
    Fact.of("Dave", "Leader of", "Sylvania", "2008-01-01", "2012-06-30"),
]


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG(FACTS, name="tiny")


def anchors(kg: TemporalKG, entities: tuple[str, ...], times: tuple[str, ...] = ()) -> QuestionAnchors:
    out = {e: tuple(sorted({f.relation for f in kg.facts(subject=e)})) for e in entities}
    inn = {e: tuple(sorted({f.relation for f in kg.facts(object=e)})) for e in entities}
    return QuestionAnchors(entities, tuple(parse_time(t) for t in times), out, inn)


def env_for(kg: TemporalKG, question: str, entities: tuple[str, ...], **settings: object) -> ARIEnvironment:
    return ARIEnvironment(kg, anchors(kg, entities), Similarity(question, None), FilterSettings(**settings))  # type: ignore[arg-type]


def test_action_texts() -> None:
    t = parse_time("2012-07")
    assert Action("get_tail_entity", "A", "r").text == "get_tail_entity(A, r, no time constraints)"
    assert Action("get_head_entity", "A", "r", time=t).text == "get_head_entity(A, r, 2012-07)"
    assert Action("get_time", "A", "r", other="B").text == "get_time(A, r, B)"
    assert Action("get_before", time=t).text == "get_before({entities}, 2012-07)"
    assert (
        Action("get_between", time=t, time2=parse_time("2013")).text
        == "get_between({entities}, 2012-07, 2013)"
    )
    assert Action("get_first").text == "get_first({entities})"
    assert Action("answer", answer="Bob").text == "answer(Bob)"


def test_lookups_and_list_operators(kg: TemporalKG) -> None:
    state, items = execute(kg, AgentState(), Action("get_head_entity", "Freedonia", "Visit"))
    assert [it.value for it in items] == ["Alice", "Bob", "Carol", "Bob"]
    assert state.relation == "Visit" and state.taken == (
        "get_head_entity(Freedonia, Visit, no time constraints)",
    )
    assert [t.iso() for t in state.anchors] == ["2010-01-05", "2013-02-11"]
    _, before = execute(kg, state, Action("get_before", time=parse_time("2012")))
    assert [it.value for it in before] == ["Alice", "Bob"]
    _, after = execute(kg, state, Action("get_after", time=parse_time("2012-07")))
    assert [it.value for it in after] == ["Bob"]
    _, between = execute(kg, state, Action("get_between", time=parse_time("2011"), time2=parse_time("2012")))
    assert [it.value for it in between] == ["Bob", "Carol"]
    _, first = execute(kg, state, Action("get_first"))
    _, last = execute(kg, state, Action("get_last"))
    assert [it.value for it in first] == ["Alice"] and [it.fact.start.iso() for it in last] == ["2013-02-11"]  # type: ignore[union-attr]
    done, chosen = execute(kg, state, Action("answer", answer="Bob"))
    assert done.done and len(chosen) == 2


def test_get_time_keeps_the_head_and_records_interval_spans(kg: TemporalKG) -> None:
    state, items = execute(kg, AgentState(), Action("get_time", "Alice", "Visit", other="Freedonia"))
    assert [(it.value, it.time.iso()) for it in items] == [("Alice", "2010-01-05")]  # type: ignore[union-attr]
    state, _ = execute(kg, AgentState(), Action("get_head_entity", "Sylvania", "Leader of"))
    assert [(a.iso(), b.iso()) for a, b in state.spans] == [("2008-01-01", "2012-06-30")]


def test_interval_facts_follow_the_operator_semantics(kg: TemporalKG) -> None:
    items = [Item("Dave", f) for f in kg.facts(relation="Leader of")]
    # before = starts before the reference begins (tkgqa.time.semantics), as in every other path
    assert filter_items(items, Action("get_before", time=parse_time("2012-07"))) == items
    assert filter_items(items, Action("get_before", time=parse_time("2012-06"))) == items
    assert filter_items(items, Action("get_before", time=parse_time("2008-01"))) == []
    assert filter_items(items, Action("get_after", time=parse_time("2007"))) == items


def test_answer_candidates_rank_by_frequency_and_offer_time_granularities(kg: TemporalKG) -> None:
    items = [Item(f.subject, f) for f in kg.facts(relation="Visit")]
    assert ranked_values(items) == ["Bob", "Alice", "Carol"]
    assert ranked_values(items, "recent")[0] == "Bob" and ranked_values(items, "earliest")[0] == "Alice"
    texts = [a.text for a in answer_candidates(items, n_entities=2, n_times=1)]
    assert texts == ["answer(Bob)", "answer(Alice)", "answer(2010-01-05)", "answer(2010-01)", "answer(2010)"]


def test_format_items_truncates_like_the_reference(kg: TemporalKG) -> None:
    items = [Item(f.subject, f) for f in kg.facts(relation="Visit")]
    text = format_items(items, 3)
    assert text.startswith(
        "entities = [('Alice', '2010-01-05'), ('Bob', '2011-03-02'), '...', ('Bob', '2013-02-11')]"
    )
    assert "(4 results)" in text
    assert format_items([], 3) == "entities = [] (no results)"
    assert "..." not in format_items(items, 10)


def test_candidates_are_non_empty_ranked_and_cut_to_top_k(kg: TemporalKG) -> None:
    env = env_for(kg, "Who did visit Freedonia first?", ("Freedonia",), top_k=2)
    cands = env.candidates(AgentState())
    assert [a.text for a in cands] == [
        "get_head_entity(Freedonia, Visit, no time constraints)",
        "get_head_entity(Freedonia, Criticize, no time constraints)",
    ]
    everything = env_for(kg, "q", ("Freedonia",), enabled=False).enumerate(AgentState())
    assert any(
        a.text.startswith("get_tail_entity(Freedonia, Visit") for a in everything
    )  # empty: filtered out
    assert not any(a.text.startswith("get_tail_entity(Freedonia, Visit") for a in env.enumerate(AgentState()))


def test_after_a_lookup_candidates_stay_on_its_relation_and_offer_list_ops(kg: TemporalKG) -> None:
    env = env_for(kg, "Who visited Freedonia first?", ("Freedonia",))
    state, _ = env.step(AgentState(), Action("get_head_entity", "Freedonia", "Visit"))
    texts = [a.text for a in env.candidates(state)]
    assert all("Criticize" not in t for t in texts)
    assert "get_head_entity(Freedonia, Visit, no time constraints)" not in texts  # already taken
    assert "get_head_entity(Freedonia, Visit, 2010-01)" in texts  # anchor at month granularity
    assert {"get_first({entities})", "get_last({entities})", "answer(Bob)"} <= set(texts)
    assert "get_before({entities}, 2010-01-05)" not in texts  # keeps nothing: not offered
    assert "get_after({entities}, 2010-01-05)" in texts


def test_no_filter_offers_every_enumerated_action_up_to_the_cap(kg: TemporalKG) -> None:
    filtered = env_for(kg, "q", ("Freedonia",)).candidates(AgentState())
    unfiltered = env_for(kg, "q", ("Freedonia",), enabled=False).candidates(AgentState())
    assert len(unfiltered) > len(filtered)
    assert (
        env_for(kg, "q", ("Freedonia",), enabled=False, max_candidates=3).candidates(AgentState())[2:] != []
    )
    assert (
        len(env_for(kg, "q", ("Freedonia",), enabled=False, max_candidates=3).candidates(AgentState())) == 3
    )


def test_similarity_uses_the_embedder_when_given() -> None:
    from tkgqa.retrieval import HashingEmbedder

    sim = Similarity("Who visited Freedonia?", HashingEmbedder())
    scores = sim.scores(["Freedonia Visit", "Sylvania Sign agreement"])
    assert scores[0] > scores[1]
    lexical = Similarity("Who visited Freedonia?", None).scores(["Freedonia Visit", "Sylvania"])
    assert lexical[0] > lexical[1] == 0.0
