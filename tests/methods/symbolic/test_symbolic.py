"""The offline symbolic reasoner on a small hand-written ICEWS-style KG (fictional people, made-up events)."""

from __future__ import annotations

import dataclasses

import pytest

from tkgqa.datasets import Question
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods import resolve_method
from tkgqa.methods.symbolic import SymbolicConfig, SymbolicReasoner
from tkgqa.query.program.nodes import Const, Entities, Filter, Match, Select, Times
from tkgqa.query.text.lexicon import RelationLexicon
from tkgqa.query.text.mentions import MentionIndex
from tkgqa.query.text.timeref import find_times
from tkgqa.query.text.words import concepts_of, lemma, tokenize
from tkgqa.time import TimePoint

DANISH_MOD = "Defense_/_Security_Ministry_(Denmark)"

ROWS = [
    ("Alice_Smith", "Make_a_visit", "Denmark", "2010-03-15"),
    ("Alice_Smith", "Make_a_visit", "Denmark", "2012-07-01"),
    ("Bob_Jones", "Make_a_visit", "Denmark", "2011-05-20"),
    ("Head_of_Government_(Egypt)", "Make_a_visit", "Denmark", "2011-05-20"),
    ("Carol_White", "Make_a_visit", "Denmark", "2011-09-09"),
    (DANISH_MOD, "Make_a_visit", "Egypt", "2011-02-02"),
    ("Denmark", "Host_a_visit", "Alice_Smith", "2010-03-15"),
    ("Belgium", "Host_a_visit", "Carol_White", "2014-04-04"),
    ("Citizen_(Belgium)", "Criticize_or_denounce", "Egypt", "2010-05-04"),
    ("Alice_Smith", "Criticize_or_denounce", "Belgium", "2013-06-01"),
    ("Criminal_(Somalia)", "Threaten", "Belgium", "2009-11-11"),
    ("Militant_(Mali)", "Threaten", "Belgium", "2013-01-01"),
    ("Foreign_Affairs_(India)", "Express_intent_to_meet_or_negotiate", "Egypt", "2014-06-06"),
    ("Egypt", "Praise_or_endorse", "India", "2010-01-10"),
    ("India", "Praise_or_endorse", "Egypt", "2012-02-02"),
    ("Denmark", "Praise_or_endorse", "Egypt", "2013-03-03"),
    ("Bob_Jones", "Praise_or_endorse", "Egypt", "2013-03-03"),
    ("Egypt", "Make_an_appeal_or_request", "Denmark", "2011-08-08"),
    ("Denmark", "Sign_formal_agreement", "Belgium", "2015-08-08"),
    ("Belgium", "Sign_formal_agreement", "Denmark", "2015-08-08"),
    ("Police_(Egypt)", "Make_statement", "Egypt", "2012-12-12"),
]


def _kg() -> TemporalKG:
    facts = []
    for s, r, o, t in ROWS:
        point = TimePoint.of(t)
        facts.append(Fact(s, r, o, point, point))
    return TemporalKG(facts, name="toy")


@pytest.fixture(scope="module")
def kg() -> TemporalKG:
    return _kg()


@pytest.fixture(scope="module")
def reasoner() -> SymbolicReasoner:
    return SymbolicReasoner()


def ask(reasoner: SymbolicReasoner, kg: TemporalKG, text: str) -> list[str]:
    return reasoner.answer(Question(qid="t", text=text), kg).answers


# --- words, times, mentions, relations ----------------------------------------------------------------
def test_lemmas_and_synonyms() -> None:
    assert lemma("made") == "make"
    assert lemma("criticised") == "criticize"
    assert lemma("citizens") == "citizen"
    assert "criticize" in concepts_of("condemned")
    assert "criticize" in concepts_of("denounce")
    assert "appeal" in concepts_of("request")


@pytest.mark.parametrize(
    ("text", "iso", "relation"),
    [
        ("Who visited Iraq in April 2005?", "2005-04", "in"),
        ("Who wanted to negotiate with Malaysia on 19 November 2015?", "2015-11-19", "in"),
        ("In 2005-01, who attacked Thailand?", "2005-01", "in"),
        ("Who praised Cambodia before 2008?", "2008", "before"),
        ("Who visited Kuwait after 2 February 2015?", "2015-02-02", "after"),
        ("Who accused Iraq before March 22nd, 2007?", "2007-03-22", "before"),
        ("Who would wish to visit Ethiopia in Feb, 2006?", "2006-02", "in"),
    ],
)
def test_time_mentions(text: str, iso: str, relation: str) -> None:
    (found,) = find_times(text, tokenize(text))
    assert found.point.iso() == iso
    assert found.relation == relation


@pytest.mark.parametrize(
    ("phrase", "entity"),
    [
        ("the Danish Ministry of Defence and Security", DANISH_MOD),
        ("Denmark's Ministry of Defence", DANISH_MOD),
        ("the citizens of Belgium", "Citizen_(Belgium)"),
        ("the Somali criminal", "Criminal_(Somalia)"),
        ("Mali's militant", "Militant_(Mali)"),
        ("the head of the Egyptian government", "Head_of_Government_(Egypt)"),
        ("the Prime Minister of Egypt", "Head_of_Government_(Egypt)"),
        ("the Foreign Minister of India", "Foreign_Affairs_(India)"),
        ("the Indian Ministry of External Affairs", "Foreign_Affairs_(India)"),
        ("the Egyptian police", "Police_(Egypt)"),
        ("Alice Smith", "Alice_Smith"),
        ("the United States", None),
    ],
)
def test_role_country_mentions(kg: TemporalKG, phrase: str, entity: str | None) -> None:
    index = MentionIndex(kg)
    text = f"When did {phrase} visit Denmark?"
    found = [m.entity for m in index.find(tokenize(text))]
    if entity is None:
        assert found == ["Denmark"]
    else:
        assert found[0] == entity


def test_country_by_demonym_alone_and_fuzzy_name(kg: TemporalKG) -> None:
    index = MentionIndex(kg)
    assert [m.entity for m in index.find(tokenize("Which Belgian citizens criticized Egypt?"))] == [
        "Citizen_(Belgium)",
        "Egypt",
    ]
    assert [m.entity for m in index.find(tokenize("Who did Alise Smith visit?"))] == ["Alice_Smith"]


@pytest.mark.parametrize(
    ("words", "relation"),
    [
        ("condemned", "Criticize_or_denounce"),
        ("expressed the intention to negotiate with", "Express_intent_to_meet_or_negotiate"),
        ("wanted to meet", "Express_intent_to_meet_or_negotiate"),
        ("visited", "Make_a_visit"),
        ("paid a visit to", "Make_a_visit"),
        ("receive the visit from", "Host_a_visit"),
        ("made a request to", "Make_an_appeal_or_request"),
        ("commended", "Praise_or_endorse"),
        ("signed an agreement with", "Sign_formal_agreement"),
    ],
)
def test_relation_lexicon(kg: TemporalKG, words: str, relation: str) -> None:
    lexicon = RelationLexicon(kg)
    ranked = lexicon.rank([t.text for t in tokenize(words)])
    assert ranked[0][0] == relation


def test_inverse_and_symmetric_relations(kg: TemporalKG) -> None:
    lexicon = RelationLexicon(kg)
    assert lexicon.inverse("Make_a_visit") == "Host_a_visit"
    assert lexicon.inverse("Host_a_visit") == "Make_a_visit"
    assert lexicon.symmetric("Sign_formal_agreement")
    assert not lexicon.symmetric("Make_a_visit")


# --- question families ---------------------------------------------------------------------------------
def test_equal_entity(reasoner: SymbolicReasoner, kg: TemporalKG) -> None:
    assert set(ask(reasoner, kg, "Who visited Denmark in May 2011?")) == {
        "Bob Jones",
        "Head of Government (Egypt)",
    }
    assert ask(reasoner, kg, "Which country condemned Egypt on 4 May 2010?") == ["Citizen (Belgium)"]


def test_time_answers_at_the_asked_granularity(reasoner: SymbolicReasoner, kg: TemporalKG) -> None:
    assert ask(reasoner, kg, "When did the citizens of Belgium condemn Egypt?") == ["2010-05-04"]
    assert ask(reasoner, kg, "In which month did the Somali criminal threaten Belgium?") == ["2009-11"]
    assert ask(reasoner, kg, "In which year did Mali's militant threaten Belgium?") == ["2013"]
    assert ask(reasoner, kg, "Could you tell me the exact month when Carol White visited Denmark?") == [
        "2011-09"
    ]


def test_first_last(reasoner: SymbolicReasoner, kg: TemporalKG) -> None:
    assert ask(reasoner, kg, "When did Alice Smith first visit Denmark?") == ["2010-03-15"]
    assert ask(reasoner, kg, "In which year did Alice Smith last visit Denmark?") == ["2012"]
    assert ask(reasoner, kg, "Who was the last to visit Denmark?") == ["Alice Smith"]
    assert ask(reasoner, kg, "Which country did Egypt praise first?") == ["India"]


def test_before_after_explicit_time(reasoner: SymbolicReasoner, kg: TemporalKG) -> None:
    assert ask(reasoner, kg, "Who praised Egypt before 2013?") == ["India"]
    assert set(ask(reasoner, kg, "After 2012, who praised Egypt?")) == {"Denmark", "Bob Jones"}


def test_after_first_and_before_last_events(reasoner: SymbolicReasoner, kg: TemporalKG) -> None:
    answer = reasoner.answer(
        Question(qid="t", text="After Bob Jones, who was the first to visit Denmark?"), kg
    )
    assert answer.answers == ["Carol White"]
    program = answer.trace[0]["program"]
    assert "time(first, ((match(Bob_Jones, Make_a_visit, Denmark) ??" in program
    assert ask(reasoner, kg, "Before Carol White, who last visited Denmark?") == [
        "Bob Jones",
        "Head of Government (Egypt)",
    ]


def test_equal_multi_same_day(reasoner: SymbolicReasoner, kg: TemporalKG) -> None:
    assert ask(reasoner, kg, "Who visited Denmark on the same day as Bob Jones?") == [
        "Head of Government (Egypt)"
    ]


def test_directions(reasoner: SymbolicReasoner, kg: TemporalKG) -> None:
    assert ask(reasoner, kg, "Which country did Alice Smith criticize?") == ["Belgium"]
    assert ask(reasoner, kg, "Who criticized Belgium?") == ["Alice Smith"]
    assert ask(reasoner, kg, "Which country was criticized by Alice Smith?") == ["Belgium"]
    assert ask(reasoner, kg, "Who received the visit from Carol White in April 2014?") == ["Belgium"]
    # only the host's record exists: "who visited" falls back to the converse relation
    assert ask(reasoner, kg, "Who visited Belgium in April 2014?") == ["Carol White"]


def test_abstains_when_it_cannot_link_or_parse(reasoner: SymbolicReasoner, kg: TemporalKG) -> None:
    unknown = reasoner.answer(Question(qid="t", text="Who visited Atlantis in 2010?"), kg)
    assert unknown.abstained and not unknown.answers and "entity" in unknown.reason_text
    name = reasoner.answer(Question(qid="t", text="When did Zorblax Quint visit Denmark?"), kg)
    assert name.abstained and "Zorblax" in name.reason_text
    nothing = reasoner.answer(Question(qid="t", text="Who visited Denmark in 1999?"), kg)
    assert nothing.abstained and nothing.trace[0]["program"]


def test_answer_evidence_and_trace(reasoner: SymbolicReasoner, kg: TemporalKG) -> None:
    answer = reasoner.answer(Question(qid="t", text="When did Alice Smith first visit Denmark?"), kg)
    assert answer.evidence[0] == Fact(
        "Alice_Smith", "Make_a_visit", "Denmark", TimePoint(2010, 3, 15), TimePoint(2010, 3, 15)
    )
    program = answer.trace[0]["program"]
    assert program.startswith("times(first(") and "match(Alice_Smith, Make_a_visit, Denmark)" in program
    assert any(step.get("op") == "select" for step in answer.trace)
    assert answer.to_dict()["trace"][0]["program"] == program


# --- programs -------------------------------------------------------------------------------------------
def test_program_printing_and_frozen_nodes(kg: TemporalKG) -> None:
    rows = Select(Filter(Match(None, "Make_a_visit", "Denmark"), "in", Const(TimePoint(2011))), "first")
    program = Entities(rows)
    assert str(program) == "entities(first(in(match(?, Make_a_visit, Denmark), 2011)))"
    assert str(Times(Match("Alice_Smith", "Make_a_visit", "Denmark"))) == (
        "times(match(Alice_Smith, Make_a_visit, Denmark), as-stored)"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        rows.which = "last"  # type: ignore[misc]
    answer = SymbolicReasoner().execute(program, kg)
    assert answer.answers == ["Bob Jones", "Head of Government (Egypt)"]


def test_registry_config_and_cache(kg: TemporalKG) -> None:
    method = resolve_method("symbolic")
    assert isinstance(method, SymbolicReasoner)
    assert method.describe()["config"]["set_order"] == "count"
    custom = SymbolicReasoner(SymbolicConfig(exclude_question_entities=False))
    assert custom.config.exclude_question_entities is False
    method.answer(Question(qid="a", text="Who visited Denmark?"), kg)
    cache = method.reasoner._shared
    first = cache.get(kg)
    method.answer(Question(qid="b", text="Who praised Egypt?"), kg)
    assert cache.get(kg) is first  # linker and lexicon built once per KG object
    assert cache.get(_kg()) is not first
