"""The symbolic reasoner over per-question contexts (Wikidata-style relation labels, year intervals).

Hand-written facts about fictional footballers; the questions mimic TimeQuestions / CronQuestions families.
"""

from __future__ import annotations

import pytest

from tkgqa.datasets import Question
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods.symbolic import SymbolicReasoner

CONTEXT = [
    Fact.of("John Doe", "member of sports team", "Riverton FC", 2001, 2004),
    Fact.of("John Doe", "member of sports team", "Lakeside United", 2005, 2008),
    Fact.of("John Doe", "award received", "Golden Boot", 2006, 2006),
    Fact.of("John Doe", "significant event", "date of birth", 1980, 1980),
    Fact.of("John Doe", "spouse", "Jane Roe", 2009, None),
    Fact.of("Mary Major", "member of sports team", "Lakeside United", 2006, 2007),
    Fact.of("Peter Minor", "member of sports team", "Lakeside United", 2010, 2011),
    Fact.of("Lakeside United", "head coach", "Sam Coach", 2003, 2009),
    Fact.of("Old Town", "replaced by", "New Town", 1990, 1990),
]


def ask(text: str, entities: list[str] | None = None) -> list[str]:
    question = Question(qid="c", text=text, context=CONTEXT, entities=entities or [])
    return SymbolicReasoner().answer(question, TemporalKG(name="unused")).answers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what team did john doe play for in 2006", "Lakeside United"),
        ("what was john doe's first team", "Riverton FC"),
        ("who is john doe's spouse", "Jane Roe"),
        ("who coached lakeside united", "Sam Coach"),
        ("what team did john doe play for before lakeside united", "Riverton FC"),
        ("who played for lakeside united with john doe", "Mary Major"),
        ("what replaced old town", "New Town"),
    ],
)
def test_entity_questions(text: str, expected: str) -> None:
    assert ask(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("when did john doe win the golden boot", "2006"),
        ("what year was john doe born", "1980"),
        ("when did john doe leave riverton fc", "2004"),
        ("when did john doe join lakeside united", "2005"),
        ("what is the end time for john doe has member of sports team as riverton fc", "2004"),
    ],
)
def test_time_questions(text: str, expected: str) -> None:
    assert ask(text)[0] == expected


def test_given_entities_and_context_kg_passed_in() -> None:
    question = Question(
        qid="c", text="Which team did he play for in 2002?", context=CONTEXT, entities=["John Doe"]
    )
    reasoner = SymbolicReasoner()
    context_kg = TemporalKG(CONTEXT, display_underscores=False)
    answer = reasoner.answer(question, context_kg)
    assert answer.answers[0] == "Riverton FC"
    assert answer.evidence and answer.trace[0]["program"].startswith("entities(")


def test_context_abstains_without_a_linked_entity() -> None:
    question = Question(qid="c", text="who won the tour de france in 1990", context=CONTEXT)
    answer = SymbolicReasoner().answer(question, TemporalKG(name="unused"))
    assert answer.abstained and answer.reason_text
