"""Issue #30: TimeR4's and CIK-LLM's traces are typed steps (their packages' ``steps`` modules), written as
the JSON rows held before, and read back from that JSON as the same classes — on the demo KG with FakeLLM."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tkgqa.datasets.base import RETRIEVED_FACTS, Question
from tkgqa.datasets.demo import load_demo_questions
from tkgqa.kg import Fact, KGStore, TemporalKG
from tkgqa.kg.loaders import load_demo_kg
from tkgqa.llm.base import LLMRequest
from tkgqa.methods import resolve_method
from tkgqa.methods.base import Answer, RefusedStep
from tkgqa.methods.cik.steps import AnswerStep, EvidenceStep, RenderStep
from tkgqa.methods.timer4.steps import (
    DatasetFactsStep,
    FKSStep,
    KGRewriteStep,
    LLMRewriteStep,
    ReasonStep,
    RewriteError,
    RewriteSkipped,
    TKSStep,
)
from tkgqa.testing import FakeLLM
from tkgqa.time import parse_time
from tkgqa.trace import RecordedStep, TraceStep, read_trace

TIMER4 = "timer4:embedder=hashing,cache_embeddings=false"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture(scope="module")
def demo() -> tuple[KGStore, list[Question]]:
    return load_demo_kg(), load_demo_questions()[:12]


def kinds(answers: list[Answer]) -> set[type]:
    """The step classes of ``answers``' traces, each trace checked: typed steps only, read back from its JSON
    as the same classes with the same JSON."""
    seen: set[type] = set()
    for answer in answers:
        assert answer.trace, answer
        for step in answer.trace:
            assert isinstance(step, TraceStep) and not isinstance(step, RecordedStep), step
        written = answer.to_dict()["trace"]
        back = read_trace(written)
        assert [type(s) for s in back] == [type(s) for s in answer.trace]
        assert [s.to_dict() for s in back] == written
        seen |= {type(s) for s in answer.trace}
    return seen


def run(spec: str, llm: FakeLLM, demo: tuple[KGStore, list[Question]]) -> list[Answer]:
    kg, questions = demo
    method = resolve_method(spec, llm=llm)
    return [method.answer(q, kg) for q in questions]


def by_prompt(rewrite: str, answer: str) -> Callable[[LLMRequest], str]:
    """TimeR4's replies: ``answer`` to the answer prompt, ``rewrite`` to the rewrite prompt."""

    def respond(request: LLMRequest) -> str:
        text = request.messages[-1].content
        return answer if text.startswith("Based on the historical facts") else rewrite

    return respond


# --- TimeR4 -------------------------------------------------------------------------------------------
def test_timer4_llm_rewrite_trace(demo: tuple[KGStore, list[Question]]) -> None:
    seen = kinds(run(TIMER4, FakeLLM(), demo))
    assert seen == {FKSStep, LLMRewriteStep, TKSStep, ReasonStep}


def test_timer4_kg_rewrite_and_skipped_rewrite_traces(demo: tuple[KGStore, list[Question]]) -> None:
    all_questions = (demo[0], load_demo_questions())  # some with a reference the KG rewrite resolves
    assert kinds(run(f"{TIMER4},rewrite=kg", FakeLLM(), all_questions)) == {
        FKSStep,
        KGRewriteStep,
        RewriteSkipped,
        TKSStep,
        ReasonStep,
    }
    assert kinds(run(f"{TIMER4},rewrite=off", FakeLLM(), demo)) == {
        FKSStep,
        RewriteSkipped,
        TKSStep,
        ReasonStep,
    }


def test_timer4_refused_rewrite_and_refused_answer(demo: tuple[KGStore, list[Question]]) -> None:
    answers = run(TIMER4, FakeLLM(by_prompt("", "")), demo)  # every reply empty: both asks refused
    assert kinds(answers) == {FKSStep, RewriteError, TKSStep, RefusedStep}
    assert all(a.abstained for a in answers)
    rewrite = answers[0].trace[1]
    assert isinstance(rewrite, RewriteError) and list(rewrite) == [
        "step",
        "mode",
        "policy",
        "original",
        "error",
    ]


def test_timer4_llm_rewrite_step_keeps_its_keys_and_their_order(demo: tuple[KGStore, list[Question]]) -> None:
    kg, questions = demo
    q = questions[0]
    accepted = f"{q.text.rstrip('?')} in 2010?"
    (answer,) = run(TIMER4, FakeLLM(by_prompt(accepted, "['x']")), (kg, [q]))
    step = answer.trace[1]
    assert isinstance(step, LLMRewriteStep) and step.accepted and step.refused is None
    assert list(step.to_dict()) == ["step", "mode", "policy", "original", "proposed", "accepted", "rewritten"]
    (refused,) = run(TIMER4, FakeLLM(by_prompt("Paris.", "['x']")), (kg, [q]))
    step = refused.trace[1]
    assert isinstance(step, LLMRewriteStep) and not step.accepted and step.rewritten == q.text
    assert list(step.to_dict())[-1] == "refused" and step["refused"] == step.refused


def test_timer4_kg_rewrite_step_keys() -> None:
    step = KGRewriteStep("kg", "always", "q?", "after", "2006", "after 2006", "ref", ["f"], False, "q2?")
    assert list(step.to_dict()) == [
        "step",
        "mode",
        "policy",
        "original",
        "relation",
        "time",
        "constraint",
        "reference",
        "anchor_facts",
        "relaxed",
        "rewritten",
    ]
    assert read_trace([step.to_dict()]) == [step] and type(read_trace([step.to_dict()])[0]) is KGRewriteStep


def test_timer4_dataset_facts_trace() -> None:
    fact = Fact("Ann", "meet", "Bob", parse_time("2001"), parse_time("2001"))
    q = Question(
        qid="1",
        text="who did ann meet",
        answers=["Bob"],
        context=[fact],
        extra={RETRIEVED_FACTS: ["Ann meet Bob from 2001 to 2001."]},
    )
    method = resolve_method("timer4:facts=dataset", llm=FakeLLM(lambda request: "['Bob']"))
    answer = method.answer(q, TemporalKG([fact]))
    assert kinds([answer]) == {DatasetFactsStep, ReasonStep}
    assert answer.trace[0] == {
        "step": "dataset_facts",
        "source": "dataset text",
        "facts": ["Ann meet Bob from 2001 to 2001."],
    }


# --- CIK-LLM ------------------------------------------------------------------------------------------
def test_cik_traces(demo: tuple[KGStore, list[Question]]) -> None:
    assert kinds(run("cik", FakeLLM(), demo)) == {EvidenceStep}  # the paper's preset: no path, abstains
    answers = run("cik:ours", FakeLLM(), demo)
    assert kinds(answers) == {EvidenceStep, RenderStep, AnswerStep}
    evidence = answers[0].trace[0]
    assert isinstance(evidence, EvidenceStep) and list(evidence) == [
        "step",
        "entities",
        "missing",
        "paths",
        "path_failed",
        "fallback",
        "counts",
        "over_delta2",
        "constraint",
        "selection_error",
    ]


def test_cik_refused_answer(demo: tuple[KGStore, list[Question]]) -> None:
    def respond(request: LLMRequest) -> str:
        return "[]" if "Expected output:" in request.messages[-1].content else ""

    answers = run("cik:ours", FakeLLM(respond), demo)
    assert kinds(answers) == {EvidenceStep, RenderStep, RefusedStep}
    assert answers[0].trace[-1] == {"step": "answer", "error": answers[0].trace[-1]["error"]}
