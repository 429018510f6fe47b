"""Conformance suite of the :class:`~tkgqa.methods.base.Method` protocol: every registered method (built-in or
plugin) on the demo KG, with :class:`~tkgqa.testing.FakeLLM` where it takes an LLM and the offline embedders.

Each method must: return an :class:`Answer` (answers are strings; abstaining means no answers and a reason),
cite only facts of the KG as evidence, answer a question about nothing in the KG without raising, have a
config that serialises to JSON and validates back to itself, and reject an unknown option with ConfigError
(both the keyword and the ``"name:key=value"`` forms).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.datasets.base import Question
from tkgqa.datasets.demo import load_demo_questions
from tkgqa.errors import ConfigError
from tkgqa.kg import TemporalKG
from tkgqa.kg.loaders import load_demo_kg
from tkgqa.methods import METHODS, Answer, Method, resolve_method
from tkgqa.testing import FakeLLM

#: Options that keep a method offline and fast (no MiniLM download/load); unknown methods get none.
LIGHT: dict[str, dict[str, Any]] = {
    "ari": {"embedder": "lexical"},
    "react_kb": {"embedder": "lexical"},
    "cot_kb": {"embedder": "lexical"},
    "kg_rag": {"embedder": "lexical"},
    "r3": {"embedder": "hashing"},
    "kaping": {"embedder": "hashing"},
    "timer4": {"embedder": "hashing"},
}
NAMES = METHODS.names()
UNANSWERABLE = Question(qid="none", text="Who visited Atlantis in 3025?", answers=["nobody"])


@pytest.fixture(scope="module")
def kg() -> TemporalKG:
    return load_demo_kg()


def build(name: str) -> Method:
    """The method with a FakeLLM when it takes one (a ConfigError for ``llm`` means it takes none)."""
    options = LIGHT.get(name, {})
    try:
        return resolve_method(name, llm=FakeLLM(), **options)
    except ConfigError as exc:
        if "extra" in str(exc) and "install" in str(exc):
            pytest.skip(f"{name}: optional dependency missing ({exc})")
        return resolve_method(name, **options)


def check_answer(answer: Answer, kg: TemporalKG) -> None:
    assert isinstance(answer, Answer)
    assert isinstance(answer.answers, list) and all(isinstance(a, str) for a in answer.answers)
    if answer.abstained:
        assert not answer.answers and answer.reason_text, "an abstention has no answers and says why"
    known = set(kg.facts())
    assert all(f in known for f in answer.evidence), "evidence must be facts of the KG"
    assert all(isinstance(v, int | float) for v in answer.usage.to_dict().values())
    json.dumps(answer.to_dict())


@pytest.mark.parametrize("name", NAMES)
def test_method_answers_demo_questions(name: str, kg: TemporalKG) -> None:
    method = build(name)
    assert isinstance(method, Method)
    for question in load_demo_questions()[:3]:
        check_answer(method.answer(question, kg), kg)


@pytest.mark.parametrize("name", NAMES)
def test_method_answers_an_unanswerable_question_without_raising(name: str, kg: TemporalKG) -> None:
    answer = build(name).answer(UNANSWERABLE, kg)
    check_answer(answer, kg)
    assert "Atlantis" not in answer.answers


@pytest.mark.parametrize("name", NAMES)
def test_method_config_serialises_and_round_trips(name: str) -> None:
    method = build(name)
    described = json.loads(json.dumps(method.describe()))
    assert isinstance(described, dict) and described.get("method")
    dumped = method.config.model_dump(mode="json")
    assert json.loads(json.dumps(dumped)) == dumped
    assert type(method.config).model_validate(dumped) == method.config


@pytest.mark.parametrize("name", NAMES)
def test_method_rejects_unknown_options(name: str) -> None:
    with pytest.raises(ConfigError):
        resolve_method(name, no_such_option_xyz=1, **LIGHT.get(name, {}))
    with pytest.raises(ConfigError):
        resolve_method(f"{name}:no_such_option_xyz=1")


_REPLY = st.one_of(
    st.text(max_size=80),
    st.sampled_from(
        [
            "", "[]", "[None]", "{}", '{"answer": []}', "Answer: Barack Obama", "Final answer: [\"China\"]",
            "$answer(Barack Obama)$", "Answer: Yes", "[[", "```json\n{\n```", "Entity: China", "nothing",
            '{"sub_questions": ["a", "b"], "question": "q"}', "P1: satisfied [F1]", "[" * 50,
        ]
    ),
)  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
@settings(
    max_examples=10, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(replies=st.lists(_REPLY, min_size=1, max_size=4))
def test_method_survives_garbage_llm_output(name: str, kg: TemporalKG, replies: list[str]) -> None:
    """Whatever the model says, the method answers or abstains, never raises (a ParseError abstains)."""
    turn = iter(range(10**6))
    llm = FakeLLM(lambda request: replies[next(turn) % len(replies)])
    options = LIGHT.get(name, {})
    try:
        method = resolve_method(name, llm=llm, **options)
    except ConfigError:
        return  # takes no LLM: covered by the tests above
    check_answer(method.answer(load_demo_questions()[0], kg), kg)


_QUESTION = st.one_of(
    st.text(max_size=80),
    st.lists(
        st.sampled_from(["Who", "When", "did", "first", "last", "before", "after", "Barack Obama", "China",
                         "visit", "in", "2014", "November 2014", "2014-11-10", "?", "and", "not", "between"]),
        max_size=12,
    ).map(" ".join),
)  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
@settings(
    max_examples=10, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_QUESTION)
def test_method_survives_any_question_text(name: str, kg: TemporalKG, text: str) -> None:
    """Questions are outside input: any text gets an Answer (possibly an abstention), never an exception."""
    if not text.strip():
        text = "?"
    check_answer(build(name).answer(Question(qid="fuzz", text=text, answers=[]), kg), kg)
