"""What every method shares: the ``Answer`` it returns, the ``Method`` base class and the registry."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from ..datasets.base import Question
from ..kg.base import KGStore
from ..kg.fact import Fact
from ..registry import Registry


def empty_usage() -> dict[str, float]:
    return {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "parse_failures": 0, "cost_usd": 0.0}


@dataclass(frozen=True)
class Answer:
    """A method's answer: ranked answer strings, the facts that support them, a trace and LLM usage.

    ``answers`` empty with ``abstained`` set means the method declined to answer (``reason`` says why).
    ``trace`` is a list of JSON-ready steps (a symbolic program, an agent's actions, prompts' outputs).
    """

    answers: list[str]
    evidence: list[Fact] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=empty_usage)
    abstained: bool = False
    reason: str = ""
    raw_output: str = ""

    @classmethod
    def abstain(cls, reason: str, trace: list[dict[str, Any]] | None = None, **kw: Any) -> Answer:
        return cls(answers=[], abstained=True, reason=reason, trace=trace or [], **kw)

    def to_dict(self) -> dict[str, Any]:
        return {
            "answers": list(self.answers),
            "evidence": [f.to_dict() for f in self.evidence],
            "trace": self.trace,
            "usage": dict(self.usage),
            "abstained": self.abstained,
            "reason": self.reason,
            "raw_output": self.raw_output,
        }


class MethodConfig(BaseModel):
    """Base of every method's configuration (serialized into results)."""


class Method(ABC):
    """A QA method: ``answer(question, kg)`` → :class:`Answer`. Stateless across questions unless noted."""

    name: ClassVar[str] = "method"
    config: MethodConfig

    @abstractmethod
    def answer(self, question: Question, kg: KGStore) -> Answer: ...

    def describe(self) -> dict[str, Any]:
        return {"method": self.name, "config": self.config.model_dump(mode="json")}


METHODS: Registry[Method] = Registry("method", Method)


def resolve_method(spec: str | type | Method, /, **kwargs: Any) -> Method:
    """Resolve a method from a name (``"symbolic"``, ``"ari"``…), a class or an instance."""
    from . import _builtin  # noqa: F401  (registers the built-in methods)

    return METHODS.resolve(spec, **kwargs)
