"""Issue #30: the traces of ``ari`` (and ``react_kb``/``cot_kb``), the LLM baselines (``llm_only``,
``kg_rag``) and ``hybrid`` are typed steps of their packages' step classes, written as the JSON they always
were (keys and key order) and read back as the same classes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tkgqa.datasets.base import Question
from tkgqa.datasets.demo import load_demo_questions
from tkgqa.kg import TemporalKG
from tkgqa.kg.loaders import load_demo_kg
from tkgqa.methods import Answer, resolve_method
from tkgqa.methods.ari.agent import StepRecord
from tkgqa.methods.ari.steps import AgentStep, FinalStep, SetupStep
from tkgqa.methods.base import RefusedStep
from tkgqa.methods.baselines.steps import AnswerStep, RetrievalStep
from tkgqa.methods.hybrid.steps import RouteStep, StagedStep
from tkgqa.testing import FakeLLM
from tkgqa.trace import RecordedStep, TraceStep, read_trace

UNANSWERABLE = Question(qid="h2", text="Is Barack Obama tall?", answers=["yes"])
ARI_STEPS = (SetupStep, AgentStep, FinalStep)
BASELINE_STEPS = (AnswerStep, RetrievalStep, RefusedStep)


@pytest.fixture(scope="module")
def kg() -> TemporalKG:
    return load_demo_kg()


def questions() -> list[Question]:
    return [*load_demo_questions()[:4], UNANSWERABLE]


def check_typed(answer: Answer, kinds: tuple[type[TraceStep], ...]) -> None:
    """Every step typed, of ``kinds``, and read back from its JSON as the same class with the same JSON."""
    assert answer.trace
    for step in answer.trace:
        assert isinstance(step, TraceStep) and not isinstance(step, RecordedStep), step
        assert isinstance(step, kinds), step
    written = answer.to_dict()["trace"]
    back = read_trace(json.loads(json.dumps(written)))
    assert [type(s) for s in back] == [type(s) for s in answer.trace]
    assert [json.dumps(s.to_dict()) for s in back] == [json.dumps(s) for s in written]  # key order too
    for old, new in zip(answer.trace, back, strict=True):
        assert new == old
        if isinstance(old, StagedStep):
            assert isinstance(new, StagedStep) and type(new.step) is type(old.step)


ARI_LIKE: dict[str, Callable[[], dict[str, Any]]] = {
    "ari": lambda: {"llm": FakeLLM()},
    "ari:policy=symbolic": lambda: {},
    "ari:policy=oracle": lambda: {},
    "react_kb": lambda: {"llm": FakeLLM(), "embedder": "lexical"},
    "cot_kb": lambda: {"llm": FakeLLM(), "embedder": "lexical"},
}


@pytest.mark.parametrize("spec", list(ARI_LIKE))
def test_ari_agents_write_typed_steps(spec: str, kg: TemporalKG) -> None:
    method = resolve_method(spec, **ARI_LIKE[spec]())
    for question in questions():
        answer = method.answer(question, kg)
        check_typed(answer, ARI_STEPS)
        assert isinstance(answer.trace[0], SetupStep) and isinstance(answer.trace[-1], FinalStep)
        assert all(isinstance(s, AgentStep) for s in answer.trace[1:-1])
        final = answer.trace[-1]
        assert isinstance(final, FinalStep)
        assert final.n_actions == sum(1 for s in answer.trace if isinstance(s, AgentStep) and s.action)


@pytest.mark.parametrize(
    ("spec", "reply", "kinds"),
    [
        ("llm_only", '["Barack Obama"]', (AnswerStep,)),
        ("llm_only", "Not sure.", (RefusedStep,)),
        ("kg_rag", '["Barack Obama"]', (RetrievalStep, AnswerStep)),
        ("kg_rag", "Not sure.", (RetrievalStep, RefusedStep)),
    ],
)
def test_baselines_write_typed_steps(
    spec: str, reply: str, kinds: tuple[type[TraceStep], ...], kg: TemporalKG
) -> None:
    extra = {"embedder": "lexical"} if spec == "kg_rag" else {}
    method = resolve_method(spec, llm=FakeLLM(lambda request: reply), retries=0, **extra)
    for question in questions():
        answer = method.answer(question, kg)
        check_typed(answer, BASELINE_STEPS)
        assert tuple(type(s) for s in answer.trace) == kinds


ARI_PRIMARY: dict[str, Any] = {"primary": "ari", "primary_options": {"policy": "symbolic"}}


@pytest.mark.parametrize(
    ("options", "inner"),
    [
        ({**ARI_PRIMARY, "fallback": "llm_only"}, BASELINE_STEPS),
        ({**ARI_PRIMARY, "fallback": "kg_rag"}, BASELINE_STEPS),
        ({**ARI_PRIMARY, "fallback": "ari"}, ARI_STEPS),
        ({"fallback": "ari"}, None),  # the symbolic primary: its steps are its own package's
    ],
)
def test_hybrid_writes_a_route_then_staged_steps(
    options: dict[str, Any], inner: tuple[type[TraceStep], ...] | None, kg: TemporalKG
) -> None:
    method = resolve_method("hybrid", llm=FakeLLM(lambda request: '["Barack Obama"]'), **options)
    routes = set()
    for question in questions():
        answer = method.answer(question, kg)
        check_typed(answer, (RouteStep, StagedStep))
        route = answer.trace[0]
        assert isinstance(route, RouteStep) and all(isinstance(s, StagedStep) for s in answer.trace[1:])
        routes.add(route.route)
        assert (route.fallback is None) == (route.route == "primary")
        for step in answer.trace[1:]:
            assert isinstance(step, StagedStep) and step.stage in ("primary", "fallback")
            if inner is not None or step.stage == "fallback":
                assert not isinstance(step.step, RecordedStep), step
            if step.stage == "primary" and options.get("primary") == "ari":
                assert isinstance(step.step, ARI_STEPS)
            if step.stage == "fallback" and inner is not None:
                assert isinstance(step.step, inner)
    assert routes == {"primary", "fallback"}


# --- the JSON forms: exactly the dicts written before the steps were typed ------------------------------
RECORDS = [
    StepRecord(0, ["a", "b"], "a", "entities = [x]", 1),
    StepRecord(1, ["a"], None, "", 0, "garbled", True, note="no action parsed"),
    StepRecord(2, ["answer(x)"], "answer(x)", "Done.", 1, "Action: $answer(x)$", free_answer=True, note="a"),
]


@pytest.mark.parametrize("record", RECORDS)
def test_agent_step_writes_the_step_record_as_before(record: StepRecord) -> None:
    before = {"type": "step", **record.to_dict()}
    step = AgentStep.of(record)
    assert json.dumps(step.to_dict()) == json.dumps(before)
    assert type(read_trace([before])[0]) is AgentStep


def test_setup_step_writes_cluster_and_methodology_only_together() -> None:
    base = {"type": "setup", "policy": "llm", "entities": ["E"], "times": [], "masked_question": "m"}
    plain = SetupStep("llm", ["E"], [], "m")
    assert json.dumps(plain.to_dict()) == json.dumps(base)
    missing = SetupStep("llm", ["E"], [], "m", cluster=3, methodology=None)
    assert json.dumps(missing.to_dict()) == json.dumps({**base, "cluster": 3, "methodology": None})
    found = SetupStep("llm", ["E"], [], "m", cluster=-1, methodology="Do this.")
    assert json.dumps(found.to_dict()) == json.dumps({**base, "cluster": -1, "methodology": "Do this."})
    for step in (plain, missing, found):
        assert type(read_trace([step.to_dict()])[0]) is SetupStep
    assert not isinstance(read_trace([{**base, "cluster": 3}])[0], SetupStep)  # no methodology key: not ours


def test_route_and_staged_steps_write_the_dicts_as_before() -> None:
    route = RouteStep("primary", "symbolic", "symbolic", False, "")
    before = {
        "type": "route",
        "route": "primary",
        "answered_by": "symbolic",
        "primary": "symbolic",
        "primary_abstained": False,
        "primary_reason": "",
    }
    assert json.dumps(route.to_dict()) == json.dumps(before)
    fell = RouteStep("fallback", None, "symbolic", True, "no parse", fallback="ari", fallback_reason="")
    after = {**before, "route": "fallback", "primary_abstained": True, "primary_reason": "no parse"}
    after.update(fallback="ari", fallback_reason="")
    after["answered_by"] = None
    assert json.dumps(fell.to_dict()) == json.dumps(after)
    answer = AnswerStep(["x"], 1)
    staged = StagedStep(answer, "fallback")
    assert json.dumps(staged.to_dict()) == json.dumps({**answer.to_dict(), "stage": "fallback"})
    # any step, a plugin's recorded dict included; a step that has a stage keeps its place for it
    recorded = StagedStep(RecordedStep({"kind": "x", "stage": "inner", "n": 1}), "primary")
    assert json.dumps(recorded.to_dict()) == json.dumps({"kind": "x", "stage": "primary", "n": 1})
    for step in (route, fell, staged):
        back = read_trace([step.to_dict()])[0]
        assert type(back) is type(step) and back == step
    # its stage is not last, so no StagedStep writes it back in that order: read back as its JSON, bytes kept
    back = read_trace([recorded.to_dict()])[0]
    assert json.dumps(back.to_dict()) == json.dumps(recorded.to_dict())
    assert not isinstance(read_trace([{"kind": "x", "stage": "other"}])[0], StagedStep)
