"""R3's prompt parsers: typed results on good replies, ParseError (never another exception) on anything else,
and the mechanical grounding check inside the grounded-answer parser."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tkgqa.errors import ParseError
from tkgqa.methods.r3.prompts import baselines as B
from tkgqa.methods.r3.prompts import ours as P

FACTS = {"F1", "F2", "F3"}
RULES = {"R1"}


def test_parse_entities() -> None:
    assert P.parse_entities("Selected entity/entities:\nKaká\n- Jordan Motor Car Company\n") == [
        "Kaká",
        "Jordan Motor Car Company",
    ]
    assert P.parse_entities("Selected entities: none") == []
    assert P.parse_entities("1. Horsens\n2. Ikast") == ["Horsens", "Ikast"]
    with pytest.raises(ParseError):
        P.parse_entities("   ")


def test_parse_axiom() -> None:
    text = (
        "Cars are sold by companies that exist. Therefore, a helpful rule is:\n"
        "Rule: Kaká must have been alive while the company existed to buy its car.\n"
        "Premises:\n- Kaká's date of birth is before the company's dissolution\n- The company sold cars\n"
        "Conclusion: Kaká could have bought a car from it."
    )
    axiom = P.parse_axiom(text)
    assert axiom.rule.startswith("Kaká must have been alive")
    assert axiom.premises == (
        "Kaká's date of birth is before the company's dissolution",
        "The company sold cars",
    )
    assert axiom.conclusion == "Kaká could have bought a car from it."
    bare = P.parse_axiom("Therefore, a helpful rule is: X must be old to vote.")
    assert bare.premises == (bare.rule,) and "X must be old" in bare.text()
    with pytest.raises(ParseError, match="no rule"):
        P.parse_axiom("I cannot help with that.")


def test_parse_grounded_answer() -> None:
    text = (
        "Step 1: The company closed in 1931. [F2]\nStep 2: Kaká was born later. [R1, assumption]\nAnswer: No"
    )
    answer = P.parse_grounded_answer(text, FACTS, RULES)
    assert answer.verdict == P.Verdict.FALSE and answer.cited_facts == ("F2",)
    assert [s.kind for s in answer.steps] == ["fact", "axiom"] and answer.steps[1].assumption
    unknown = P.parse_grounded_answer("Step 1: Nothing says. [assumption]\nAnswer: I dont know", FACTS)
    assert unknown.verdict == P.Verdict.UNKNOWN and unknown.cited_facts == ()


def test_grounding_check_rejects_unlisted_facts_and_uncited_verdicts() -> None:
    with pytest.raises(ParseError, match=r"step 1 cites F9, which is not among the retrieved facts"):
        P.parse_grounded_answer("Step 1: Made up. [F9]\nAnswer: Yes", FACTS, RULES)
    with pytest.raises(ParseError, match="unknown rule R4"):
        P.parse_grounded_answer("Step 1: A rule. [R4]\nAnswer: Yes", FACTS, RULES)
    with pytest.raises(ParseError, match="must cite at least one listed fact"):
        P.parse_grounded_answer("Step 1: Everyone knows. [assumption]\nAnswer: Yes", FACTS, RULES)
    ok = P.parse_grounded_answer("Step 1: Everyone knows.\nAnswer: Yes", FACTS, require_fact=False)
    assert ok.verdict == P.Verdict.TRUE
    with pytest.raises(ParseError, match="no verdict"):
        P.parse_grounded_answer("Step 1: hmm [F1]", FACTS)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Answer: Yes", P.Verdict.TRUE),
        ("Therefore, the answer is: No, she was married.", P.Verdict.FALSE),
        ("**Answer:** I don't know", P.Verdict.UNKNOWN),
        ("Final answer: True", P.Verdict.TRUE),
        ("reasoning...\nIncorrect.", P.Verdict.FALSE),
        ("Answer: not enough information", P.Verdict.UNKNOWN),
    ],
)
def test_parse_verdict(text: str, verdict: P.Verdict) -> None:
    assert P.parse_verdict(text) == verdict


def test_fact_and_relation_selection() -> None:
    assert P.parse_fact_selection("They matter. Therefore, the relevant facts are: F3, F1, F7", FACTS) == [
        "F3",
        "F1",
    ]
    assert P.parse_fact_selection("Therefore, the relevant facts are: None", FACTS) == []
    with pytest.raises(ParseError):
        P.parse_fact_selection("hmm", FACTS)
    rels = ["date of birth", "occupation"]
    assert P.parse_relation_selection("Therefore, the relevant relations are: date of birth", rels) == [
        "date of birth"
    ]
    assert P.parse_relation_selection("None", rels) == []
    with pytest.raises(ParseError):
        P.parse_relation_selection("spouse", rels)


def test_missing_evidence_parsers() -> None:
    assert P.parse_need("nothing") is None
    assert (
        P.parse_need("We need to know Chelsea Clinton's religion.")
        == "We need to know Chelsea Clinton's religion."
    )
    assert P.parse_next_entity("Entity: Chelsea Clinton") == "Chelsea Clinton"
    assert P.parse_next_entity("Georgetown University\nbecause…") == "Georgetown University"
    with pytest.raises(ParseError, match="already chosen"):
        P.parse_next_entity("Entity: Bill Clinton", ["bill clinton"])
    with pytest.raises(ParseError):
        P.parse_need("")


def test_premise_checks() -> None:
    text = "P1: satisfied [F1] it is a curry\nP2: violated [F2, F3] contains peanuts\nnoise"
    checks = P.parse_premise_checks(text, 3, FACTS)
    assert [(c.premise, c.status, c.facts) for c in checks] == [
        (1, P.PremiseStatus.SATISFIED, ("F1",)),
        (2, P.PremiseStatus.VIOLATED, ("F2", "F3")),
        (3, P.PremiseStatus.UNKNOWN, ()),
    ]
    assert checks[1].note == "contains peanuts"
    with pytest.raises(ParseError, match="not a listed fact"):
        P.parse_premise_checks("P1: satisfied [F8]", 1, FACTS)
    with pytest.raises(ParseError):
        P.parse_premise_checks("looks fine", 2, FACTS)


def test_baseline_reply() -> None:
    reply = B.parse_baseline_reply("Fact [F1] and [F5] say so.\nFinal answer: Yes", {"F1"})
    assert reply.verdict == P.Verdict.TRUE and reply.cited == ("F1",) and reply.unknown_ids == ("F5",)


def test_builders_list_facts_and_rules() -> None:
    msgs = P.build_answer_messages("Q?", [("R1", "a rule")], [("F1", "(a, b, c)")], claim=True)
    assert "[F1] (a, b, c)" in msgs[-1].content and "[R1] a rule" in msgs[-1].content
    assert "Claim" in msgs[-1].content
    assert "Previously chosen entities: X" in P.build_next_entity_messages("Q", "n", [], ["X"])[-1].content
    assert "Rules already tried" in P.build_axiom_messages("Q", [], ["old rule"])[-1].content
    assert "Question: Would a vegetarian" in B.build_cot_messages("Q", shots=2)[-1].content
    assert "Question: Would a vegetarian" not in B.build_cot_messages("Q", shots=0)[-1].content


_texts = st.text(max_size=300) | st.lists(
    st.sampled_from(
        [
            "Step 1:",
            "Answer:",
            "[F1]",
            "[F9]",
            "[R1]",
            "Yes",
            "No",
            "I dont know",
            "Rule:",
            "Premises:",
            "- p",
            "Conclusion:",
            "P1:",
            "satisfied",
            "violated",
            "Entity:",
            "\n",
            "nothing",
            "None",
            "F2",
            "Selected entities:",
            "relevant facts are:",
            "{",
            "]",
            "(",
        ]
    ),
    max_size=30,
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_texts)
def test_parsers_raise_only_parse_errors(text: str) -> None:
    parsers: list[Callable[[str], object]] = [
        P.parse_entities,
        P.parse_axiom,
        P.parse_verdict,
        lambda t: P.parse_fact_selection(t, FACTS),
        lambda t: P.parse_relation_selection(t, ["date of birth"]),
        lambda t: P.parse_grounded_answer(t, FACTS, RULES),
        P.parse_need,
        lambda t: P.parse_next_entity(t, ["A"]),
        lambda t: P.parse_premise_checks(t, 2, FACTS),
        lambda t: B.parse_baseline_reply(t, FACTS),
    ]
    for parse in parsers:
        try:
            parse(text)
        except ParseError as exc:
            assert exc.raw == text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(sorted(FACTS | {"F7", "F12"})), min_size=1, max_size=4))
def test_grounding_check_is_exact(cited: list[str]) -> None:
    text = f"Step 1: reasons [{', '.join(cited)}]\nAnswer: Yes"
    if set(cited) <= FACTS:
        assert set(P.parse_grounded_answer(text, FACTS).cited_facts) == set(cited)
    else:
        with pytest.raises(ParseError, match="not among the retrieved facts"):
            P.parse_grounded_answer(text, FACTS)
