"""The KG-supported diagnostic."""

from __future__ import annotations

from tkgqa.datasets import Question
from tkgqa.eval.support import SupportChecker, kg_supported
from tkgqa.kg import Fact, TemporalKG
from tkgqa.time import TimePoint


def icews() -> TemporalKG:
    day = TimePoint.of
    return TemporalKG(
        [
            Fact("Iraq", "Host_a_visit", "Jack_Straw", day("2006-01-07"), day("2006-01-07")),
            Fact("Citizen_(North_Korea)", "Demand", "China", day("2005-01-12"), day("2005-01-12")),
            Fact("China", "Consult", "Iran", day("2012-05-03"), day("2012-05-03")),
            Fact("Kazakhstan", "Consult", "Russia", day("2009-01-01"), day("2009-01-01")),
        ],
        name="icews",
    )


def q(text: str, answers: list[str], answer_type: str = "entity", **kw: object) -> Question:
    return Question(qid="1", text=text, answers=answers, answer_type=answer_type, **kw)  # type: ignore[arg-type]


def test_entity_answer_linked_from_mentions() -> None:
    ok, reason = kg_supported(icews(), q("After 2005, who was the first to visit Iraq?", ["Jack Straw"]))
    assert ok and "Host_a_visit" in reason
    ok, _ = kg_supported(icews(), q("Who made a demand to China?", ["Citizen (North Korea)"]))
    assert ok  # gold linked through its KG spelling, in the object→subject direction


def test_time_answer_at_gold_granularity() -> None:
    kg = icews()
    assert kg_supported(kg, q("When did China consult Iran?", ["2012-05"], "time"))[0]
    assert kg_supported(kg, q("When did China consult Iran?", ["2012"], "time"))[0]
    assert kg_supported(kg, q("When did China consult Iran?", ["2012-05-03"], "time"))[0]
    ok, reason = kg_supported(kg, q("When did China consult Iran?", ["2012-05-04"], "time"))
    assert not ok and "no fact links" in reason


def test_unsupported_reasons() -> None:
    kg = icews()
    assert kg_supported(kg, q("Who visited Iraq?", [])) == (False, "no gold answer")
    assert (
        kg_supported(kg, q("Who visited Atlantis?", ["Jack Straw"]))[1]
        == "no question entity found in the KG"
    )
    ok, reason = kg_supported(kg, q("Who visited Iraq?", ["Nobody Known"]))
    assert not ok and "not in the KG" in reason
    ok, reason = kg_supported(kg, q("Who consulted Kazakhstan?", ["Iran"]))
    assert not ok and "no fact links" in reason


def test_mentions_longest_match_stopwords_and_plural() -> None:
    kg = TemporalKG(
        [
            Fact("Justin Bieber", "sibling", "Jaxon Bieber"),
            Fact("Justin Bieber", "significant event", "date of birth", TimePoint(1994), TimePoint(1994)),
            Fact("Who", "member of", "The Band"),
        ]
    )
    checker = SupportChecker(kg)
    assert checker.mentions("what time is justin biebers birthday") == ["Justin Bieber"]
    assert checker.mentions("who is jaxon bieber") == ["Jaxon Bieber"]  # stop word "who" never counts
    question = q("what time is justin biebers birthday", ["1994"], "time")
    assert checker.check(question)[0]


def test_annotated_entities_and_their_labels() -> None:
    kg = TemporalKG(
        [Fact("Q1", "P54", "Q10", TimePoint(1994), TimePoint(2000))], labels={"Q10": "A.C. Milan"}
    )
    question = q(
        "Which team did Roberto Colombo play for?", ["A.C. Milan"], answer_ids=["Q10"], entities=["Q1"]
    )
    assert kg_supported(kg, question)[0]
    labelled = TemporalKG([Fact("Roberto Colombo", "member of sports team", "A.C. Milan")])
    annotated = q(
        "Which team did Q1 play for?",
        ["A.C. Milan"],
        answer_ids=["Q10"],
        entities=["Q1"],
        extra={"entity_labels": {"Q1": "Roberto Colombo"}},
    )
    assert kg_supported(labelled, annotated)[0]
