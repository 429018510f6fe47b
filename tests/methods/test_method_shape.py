"""Every built-in method is built alike: ``(config=None, *, llm=None, spec=None, **overrides)`` through
``Method.__init__``, its config class declared, unknown options (``policy`` for a method without one
included) rejected, ``describe()`` from the config, presets through the shared mechanism."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from tkgqa.api.resolve import build_method, takes_llm
from tkgqa.datasets.base import Question
from tkgqa.errors import ConfigError
from tkgqa.kg.base import KGStore
from tkgqa.kg.loaders import load_demo_kg
from tkgqa.llm import current_llm_context
from tkgqa.methods.base import (
    METHODS,
    NO_NOTES,
    Answer,
    Method,
    MethodConfig,
    PresetConfig,
    SetupNotes,
    StepEvent,
    StepKind,
    report_step,
    resolve_method,
    step_reporter,
)
from tkgqa.methods.package import builtin_methods
from tkgqa.testing import FakeLLM

#: options that make each method buildable offline (an LLM-free preset where one exists)
OFFLINE: dict[str, dict[str, Any]] = {
    "ari": {"policy": "symbolic", "embedder": "hashing"},
    "timer4": {"embedder": "hashing", "cache_embeddings": False},
    "lpkg": {"preset": "ours"},
    "kg_rag": {"embedder": "hashing"},
    "r3": {"embedder": "hashing"},
    "kaping": {"embedder": "hashing"},
    "hybrid": {"fallback": "llm_only"},
}


def built_in() -> list[str]:
    return list(builtin_methods())


def build(name: str, **extra: Any) -> Method:
    llm = FakeLLM([]) if METHODS.factory(name).takes_llm() else None  # type: ignore[attr-defined]
    return resolve_method(name, **({"llm": llm} if llm else {}), **OFFLINE.get(name, {}), **extra)


@pytest.mark.parametrize("name", built_in())
def test_every_method_is_built_by_the_base_constructor(name: str) -> None:
    cls = METHODS.factory(name)
    assert isinstance(cls, type) and issubclass(cls, Method)
    assert issubclass(cls.config_class, MethodConfig) and cls.config_class is not MethodConfig
    params = inspect.signature(cls.__init__).parameters
    assert list(params)[:2] == ["self", "config"]
    assert params["llm"].kind is params["spec"].kind is inspect.Parameter.KEYWORD_ONLY
    method = build(name)
    assert isinstance(method.config, cls.config_class) and isinstance(method.requested, cls.config_class)
    described = method.describe()
    assert described["method"] == name and described["config"] == method.config.model_dump(mode="json")
    assert set(described.get("requested", described["config"])) == set(described["config"])
    if isinstance(method.config, PresetConfig):
        assert described["preset"] == "paper" or name == "lpkg"
        assert described["deviations"] == method.deviations()
        assert isinstance(described["unspecified_by_paper"], list)


@pytest.mark.parametrize("name", built_in())
def test_unknown_options_are_errors_for_every_method(name: str) -> None:
    with pytest.raises(ConfigError, match="no_such_option"):
        build(name, no_such_option=1)
    with pytest.raises(ConfigError, match="no_such_option"):
        build(name, spec="no_such_option=1")


@pytest.mark.parametrize("name", built_in())
def test_policy_is_an_option_only_of_the_methods_that_have_one(name: str) -> None:
    cls = METHODS.factory(name)
    assert isinstance(cls, type) and issubclass(cls, Method)
    if "policy" in cls.config_class.model_fields:
        return
    with pytest.raises(ConfigError, match="policy"):
        build(name, policy="oracle")
    with pytest.raises(ConfigError, match="--policy"):
        build_method(name, policy="oracle")


def test_r3_rejects_the_policy_the_cli_alias_would_pass() -> None:
    with pytest.raises(ConfigError, match="policy"):
        resolve_method("r3", policy="oracle")
    with pytest.raises(ConfigError, match="--method-option policy=X"):
        build_method("r3", llm="fake", policy="oracle")
    assert build_method("ari", policy="oracle").config.policy == "oracle"  # type: ignore[attr-defined]


def test_short_spec_forms_still_resolve() -> None:
    assert resolve_method("ari:oracle").config.policy == "oracle"  # type: ignore[attr-defined]
    timer4 = resolve_method("timer4:no_rerank,ours", embedder="hashing")
    assert timer4.config.rerank is False and timer4.config.preset == "ours"  # type: ignore[attr-defined]
    assert resolve_method("lpkg:random,ours").config.planner == "random"  # type: ignore[attr-defined]
    assert resolve_method("cik:nocompress").config.compress is False  # type: ignore[attr-defined]
    hybrid = resolve_method("hybrid:fallback=ari:policy=symbolic;t_max=3")
    assert hybrid.fallback.config.t_max == 3  # type: ignore[attr-defined]


def test_llm_goes_into_the_config_of_every_llm_method() -> None:
    for name in ("timer4", "cik", "lpkg", "r3", "llm_only", "ari"):
        method = build(name) if name != "ari" else resolve_method("ari", llm="fake", embedder="hashing")
        assert method.llm is not None and method.config.llm is not None  # type: ignore[attr-defined]
        assert method.describe()["llm"] == method.llm.cache_namespace()
    assert not takes_llm("symbolic") and takes_llm("ari") and takes_llm("timer4")
    with pytest.raises(ConfigError, match="llm"):
        resolve_method("symbolic", llm="fake")


@pytest.mark.parametrize("name", built_in())
def test_every_method_implements_reason_and_leaves_answer_to_the_base(name: str) -> None:
    cls = type(build(name))
    assert "answer" not in vars(cls) and cls.answer is Method.answer
    assert cls.deviations is Method.deviations  # one signature: MethodConfig.deviations(notes)
    assert not getattr(cls.reason, "__isabstractmethod__", False)


def test_a_method_defining_answer_is_a_type_error_at_class_creation() -> None:
    with pytest.raises(TypeError, match="implement reason"):

        class Old(Method):
            name = "old"

            def answer(self, question: Question, kg: KGStore) -> Answer:  # type: ignore[misc]
                return Answer([])


class _Steps(Method):
    name = "steps"

    def reason(self, question: Question, kg: KGStore) -> Answer:
        report_step(StepEvent(StepKind.STAGE, 0, "one"))
        report_step(StepEvent(StepKind.STAGE, 1, "two", method="other"))
        assert current_llm_context()["method"] == "steps"
        assert current_llm_context()["question_id"] == question.qid
        return Answer(["x"]) if question.qid != "bad" else {"answers": []}  # type: ignore[return-value]


def test_answer_wraps_reason_with_the_llm_context_and_the_step_method() -> None:
    events: list[StepEvent] = []
    method, kg = _Steps(), load_demo_kg()
    with step_reporter(events.append):
        assert method.answer(Question(qid="q1", text="?"), kg).answers == ["x"]
    assert [e.method for e in events] == ["steps", "other"]
    assert current_llm_context().get("method") is None
    report_step(StepEvent(StepKind.STAGE, 0, "outside"))  # no reporter: nothing happens
    with pytest.raises(TypeError, match=r"_Steps\.reason returned dict, not Answer"):
        method.answer(Question(qid="bad", text="?"), kg)


def test_setup_notes_feed_the_config_once_and_the_deviations() -> None:
    class Noted(Method):
        name = "noted"
        config_class = _NotedConfig

        def setup(self) -> SetupNotes:
            return SetupNotes(settings={"size": 3}, fallbacks=("size=3: decided at setup",))

        def reason(self, question: Question, kg: KGStore) -> Answer:
            return Answer([])

    method = Noted()
    assert method.requested.size == 1 and method.config.size == 3
    assert method.notes.fallbacks == ("size=3: decided at setup",)
    assert method.deviations() == ["size=3 (noted at setup)"]
    assert _NotedConfig().deviations() == []


class _NotedConfig(MethodConfig):
    size: int = 1

    def deviations(self, notes: SetupNotes = NO_NOTES) -> list[str]:
        return [f"size={self.size} (noted at setup)"] if notes.fallbacks else []
