"""The paper's LLM baselines with FakeLLM: llm_only, kg_rag, react_kb, cot_kb."""

from __future__ import annotations

import pytest

from tkgqa.datasets.base import Question
from tkgqa.errors import ConfigError, ParseError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods import resolve_method
from tkgqa.methods.ari.prompts import build_schema_block
from tkgqa.methods.baselines.prompts import parse_answer_list
from tkgqa.testing import FakeLLM
from tkgqa.time import parse_time


def kg() -> TemporalKG:
    t = parse_time
    facts = [
        Fact(
            "Alice",
            "Make a visit",
            "Freedonia",
            t(f"20{10 + i}-01-0{1 + i % 8}"),
            t(f"20{10 + i}-01-0{1 + i % 8}"),
        )
        for i in range(15)
    ]
    facts += [
        Fact(f"Visitor {i}", "Make a visit", "Freedonia", t("2012-05-05"), t("2012-05-05")) for i in range(15)
    ]
    facts += [Fact("Freedonia", "Criticize", "Sylvania", t("2013-03-03"), t("2013-03-03"))]
    return TemporalKG(facts, name="tiny")


Q = Question(qid="b1", text="Who visited Freedonia in May 2012?", answers=["Visitor 1"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('["Alice", "Bob"]', ["Alice", "Bob"]),
        ("Answer: ['Alice']", ["Alice"]),
        ('```json\n["2012-05"]\n```', ["2012-05"]),
        ("Answer: Alice\nBecause ...", ["Alice"]),
        ("[Alice, Bob]", ["Alice", "Bob"]),
        ('["Alice", "Alice", ""]', ["Alice"]),
        ("The answer is: [2014-11, 2015-05-27, 20", ["2014-11", "2015-05-27"]),  # truncated
        ("The answer is: Thailand.", ["Thailand"]),
    ],
)
def test_parse_answer_list(text: str, expected: list[str]) -> None:
    assert parse_answer_list(text) == expected


def test_parse_answer_list_failures() -> None:
    for text in ("", "I don't know.", "[]"):
        with pytest.raises(ParseError):
            parse_answer_list(text)


def test_llm_only() -> None:
    llm = FakeLLM(['["Visitor 1"]'])
    ans = resolve_method("llm_only", llm=llm).answer(Q, kg())
    assert ans.answers == ["Visitor 1"] and ans.usage.to_dict()["llm_calls"] == 1
    assert "Question: Who visited Freedonia in May 2012?" in llm.requests[0].messages[-1].content
    assert "Freedonia, Make a visit" not in llm.requests[0].messages[-1].content  # no KG facts


def test_llm_only_retry_then_parse_failure() -> None:
    llm = FakeLLM(["I don't know.", "Not sure."])
    ans = resolve_method("llm_only", llm=llm).answer(Q, kg())
    assert ans.abstained and ans.usage.to_dict()["parse_failures"] == 2 and llm.calls == 2
    assert ans.trace[-1]["type"] == "parse_failure" and ans.raw_output == "Not sure."
    assert resolve_method("llm_only", llm=FakeLLM(["??", '["x"]'])).answer(Q, kg()).answers == ["x"]


def test_kg_rag_puts_at_most_max_facts_in_the_prompt() -> None:
    llm = FakeLLM(['["Visitor 3"]'])
    method = resolve_method("kg_rag", llm=llm, max_facts=5)
    ans = method.answer(Q, kg())
    prompt = llm.requests[0].messages[-1].content
    assert ans.answers == ["Visitor 3"] and len(ans.evidence) == 5
    assert prompt.count("\n- (") == 5 and "2012-05-05" in prompt  # the question's month first
    facts = next(t for t in ans.trace if t["type"] == "retrieval")["facts"]
    assert len(facts) == 5 and all("Make a visit" in f for f in facts)
    default = resolve_method("kg_rag", llm=FakeLLM(['["x"]']))
    assert len(default.answer(Question(qid="b2", text="Who visited Freedonia?"), kg()).evidence) == 20


def test_react_kb_uses_the_candidates_without_methodology() -> None:
    llm = FakeLLM(
        [
            "Thought: list visitors.\nAction: $get_head_entity(Freedonia, Make a visit, 2012-05)$",
            "Thought: done.\nAction: $answer(Visitor 0)$",
        ]
    )
    ans = resolve_method("react_kb", llm=llm, policy="llm").answer(Q, kg())
    assert ans.answers[0] == "Visitor 0"
    prompt = llm.requests[0].messages[-1].content
    assert "Thought:" in prompt and "Methodology:" not in prompt and "Available Actions:" in prompt


def test_cot_kb_writes_its_own_actions_grounded_to_executable_ones() -> None:
    llm = FakeLLM(
        [
            "Reason: find who visited in that month.\n"
            "Action: $get_head_entity(Freedonia, make a visit, 2012-05)$",
            "Action: $answer(Visitor 2)$",
        ]
    )
    ans = resolve_method("cot_kb", llm=llm).answer(Q, kg())
    steps = [t for t in ans.trace if t["type"] == "step"]
    assert (
        steps[0]["action"] == "get_head_entity(Freedonia, Make a visit, 2012-05)"
        and steps[0]["note"] == "grounded"
    )
    assert ans.answers[0] == "Visitor 2"
    prompt = llm.requests[0].messages[-1].content
    assert "Available Actions:" not in prompt and "Relations around them: Make a visit" in prompt
    assert prompt.count("Reason:") >= 3 and "Methodology:" not in prompt


def test_cot_kb_parse_failure() -> None:
    ans = resolve_method("cot_kb", llm=FakeLLM(["no idea", "none"]), retries=1).answer(Q, kg())  # ARI: 0
    assert ans.abstained and ans.usage.to_dict()["parse_failures"] == 2


def test_baselines_need_an_llm_and_refuse_other_policies() -> None:
    for name in ("llm_only", "kg_rag", "react_kb", "cot_kb"):
        with pytest.raises(ConfigError):
            resolve_method(name)
    with pytest.raises(ConfigError, match="policy"):
        resolve_method("react_kb", llm=FakeLLM([]), policy="oracle")


def test_schema_block() -> None:
    text = build_schema_block(["A"], ["r1", "r2"], [])
    assert (
        "Entities in the question: A" in text and "Relations around them: r1, r2" in text and "(none)" in text
    )
