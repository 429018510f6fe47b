"""The KG-supported diagnostic."""

from __future__ import annotations

import pytest

from tkgqa.datasets import Question
from tkgqa.eval.support import SupportChecker, kg_supported, question_times
from tkgqa.kg import Fact, TemporalKG
from tkgqa.outcomes import ResultRow
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


def test_all_question_entities_must_be_linked() -> None:
    kg = icews()
    # a time answer needs a fact between the two question entities at that time, not any fact of one of them
    joint = q("When did China consult Kazakhstan?", ["2012-05-03"], "time")
    ok, reason = kg_supported(kg, joint)
    assert not ok and "all of" in reason
    assert kg_supported(kg, joint, loose=True)[0]  # China has some fact on 2012-05-03
    # an entity answer linked to Iraq, with a second question entity that no fact connects
    anchored = q("After Kazakhstan, who was the first to visit Iraq?", ["Jack Straw"])
    assert not kg_supported(kg, anchored)[0]
    assert kg_supported(kg, anchored, loose=True)[0]
    # the answer is linked to China, and Iran to China (a fact at any time): all entities connected
    assert kg_supported(kg, q("After Iran, who made a demand to China?", ["Citizen (North Korea)"]))[0]
    # Russia is linked to Kazakhstan only, which the question does not mention: not connected
    assert not kg_supported(kg, q("After Russia, who made a demand to China?", ["Citizen (North Korea)"]))[0]


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


# --- "at the asked time" ------------------------------------------------------------------------------------
def timed_kg() -> TemporalKG:
    day = TimePoint.of
    return TemporalKG(
        [
            Fact("Iraq", "Host_a_visit", "Jack_Straw", day("2006-01-07"), day("2006-01-07")),
            Fact("Iraq", "Host_a_visit", "Kofi_Annan", day("2012-03-05"), day("2012-03-05")),
            Fact("China", "Consult", "Iran", day("2012-05-03"), day("2012-05-03")),
            Fact("China", "Consult", "Iran", day("2014-02-01"), day("2014-02-01")),
            Fact("Bolt", "participant in", "2008 Summer Olympics", TimePoint(2008), TimePoint(2008)),
            Fact("Ann", "member of sports team", "FC Nord", TimePoint(1990), TimePoint(1995)),
        ],
        name="timed",
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Who visited Iraq in March 2012?", [("in", "2012-03-01", "2012-03-31")]),
        ("Who visited Iraq on 2010-05-03?", [("in", "2010-05-03", "2010-05-03")]),
        ("Who visited Iraq on 5 March 2012?", [("in", "2012-03-05", "2012-03-05")]),
        ("In 2008, who visited Iraq?", [("in", "2008-01-01", "2008-12-31")]),
        ("Who visited Iraq before June 2007?", [("before", "2007-06-01", "2007-06-30")]),
        ("Prior to 2007, who visited Iraq?", [("before", "2007-01-01", "2007-12-31")]),
        ("Who visited Iraq after 2 February 2015?", [("after", "2015-02-02", "2015-02-02")]),
        ("Who played for FC Nord between 1990 and 1993?", [("in", "1990-01-01", "1993-12-31")]),
        ("Where did Xi go after his September 2015 visit?", [("after", "2015-09-01", "2015-09-30")]),
        ("Who visited Iraq after the Danish ministry?", []),
        ("Who paid 1,500 dollars?", []),
    ],
)
def test_question_times(text: str, expected: list[tuple[str, str, str]]) -> None:
    found = [
        (c.kind, TimePoint.from_ordinal(c.span[0]).iso(), TimePoint.from_ordinal(c.span[1]).iso())
        for c in question_times(text)
    ]
    assert found == expected


def test_entity_answer_must_be_linked_at_the_asked_time() -> None:
    kg = timed_kg()
    checker = SupportChecker(kg)
    in_2006 = q("Who visited Iraq in January 2006?", ["Jack Straw"])
    in_2012 = q("Who visited Iraq in March 2012?", ["Jack Straw"])
    assert checker.check(in_2006)[0]
    ok, reason = checker.check(in_2012)
    assert not ok and "at the asked time (in March 2012)" in reason
    assert checker.check(q("Who visited Iraq on 2012-03-05?", ["Kofi Annan"]))[0]
    assert not checker.check(q("Who visited Iraq on 2012-03-06?", ["Kofi Annan"]))[0]
    assert checker.check(q("Who visited Iraq in 2012?", ["Kofi Annan"]))[0]  # the question's granularity


def test_before_and_after_need_the_right_side() -> None:
    checker = SupportChecker(timed_kg())
    assert checker.check(q("Who visited Iraq before 2010?", ["Jack Straw"]))[0]
    assert not checker.check(q("Who visited Iraq after 2010?", ["Jack Straw"]))[0]
    assert checker.check(q("After 2010, who visited Iraq?", ["Kofi Annan"]))[0]
    assert not checker.check(q("Who visited Iraq before March 2012?", ["Kofi Annan"]))[0]
    assert not checker.check(q("Who visited Iraq after March 2012?", ["Kofi Annan"]))[0]  # same month


def test_time_answers_and_explicit_times_together() -> None:
    checker = SupportChecker(timed_kg())
    assert checker.check(q("When did China consult Iran in 2012?", ["2012-05-03"], "time"))[0]
    assert not checker.check(q("When did China consult Iran in 2014?", ["2012-05-03"], "time"))[0]
    assert checker.check(q("After 2013, when did China consult Iran?", ["2014-02"], "time"))[0]
    assert not checker.check(q("Before 2013, when did China consult Iran?", ["2014-02"], "time"))[0]


def test_years_in_entity_names_and_intervals() -> None:
    checker = SupportChecker(timed_kg())
    # "2008" names the Games, it is no time constraint
    assert checker.check(q("Who took part in the 2008 Summer Olympics?", ["Bolt"]))[0]
    # an interval fact is "in" a time it overlaps, "before" a time after its start
    assert checker.check(q("Who played for FC Nord in 1993?", ["Ann"]))[0]
    assert checker.check(q("Who played for FC Nord between 1994 and 1999?", ["Ann"]))[0]
    assert not checker.check(q("Who played for FC Nord in 1997?", ["Ann"]))[0]
    assert checker.check(q("Who played for FC Nord before 1992?", ["Ann"]))[0]
    assert not checker.check(q("Who played for FC Nord after 1995?", ["Ann"]))[0]


def test_report_keeps_both_support_numbers() -> None:
    from tkgqa.eval.report import build_report, render_markdown

    rows = [
        {"qid": "1", "strict_hit": True, "lenient_hit": True, "supported": True, "supported_loose": True},
        {
            "qid": "2",
            "strict_hit": False,
            "lenient_hit": False,
            "supported": False,
            "supported_loose": True,
        },
        {
            "qid": "3",
            "strict_hit": False,
            "lenient_hit": False,
            "supported": False,
            "supported_loose": False,
        },
    ]
    report = build_report([ResultRow.from_json(r) for r in rows])
    assert report.supported["n"] == 1 and report.supported["strict_hits@1"] == 1.0
    assert report.supported_loose["n"] == 2 and report.supported_loose["strict_hits@1"] == 0.5
    assert "loose (one question entity linked suffices)" in render_markdown(report)
