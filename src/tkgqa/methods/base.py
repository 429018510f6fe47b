"""What every method shares: the ``Answer`` it returns, the ``Method`` base class and the registry."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..datasets.base import Question
from ..errors import ConfigError
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
    """Base of every method's configuration (serialized into results). Unknown settings are errors, so a
    mistyped option in ``--method "name:key=value"`` never goes silently unused."""

    model_config = ConfigDict(extra="forbid")


C = TypeVar("C", bound=MethodConfig)


def parse_options(
    spec: str | None,
    *,
    method: str,
    flags: Mapping[str, tuple[str, Any]] | None = None,
    positional: str | None = None,
) -> dict[str, Any]:
    """The options written after a method's name: ``"a=1,b=x"`` → ``{"a": "1", "b": "x"}`` (values are
    validated by the method's config). A bare word is looked up in ``flags`` (``"no_rerank"`` →
    ``("rerank", False)``), else taken as the value of ``positional`` (``"ari:oracle"`` → policy), else an
    error. Keys are lower-cased with ``-`` read as ``_``; ``+`` separates options like ``,``."""
    out: dict[str, Any] = {}
    flags = flags or {}
    for part in (spec or "").replace("+", ",").split(","):
        token = part.strip()
        if not token:
            continue
        key, sep, value = token.partition("=")
        if sep:
            if not key.strip():
                raise ConfigError(f"bad {method} option {part!r}: use key=value pairs separated by commas")
            out[key.strip().lower().replace("-", "_")] = value.strip()
            continue
        flag = flags.get(token.lower().replace("-", "_").replace("/", "_"))
        if flag is not None:
            out[flag[0]] = flag[1]
        elif positional is not None and positional not in out:
            out[positional] = token
        else:
            known = f"flags {', '.join(flags)} or " if flags else ""
            raise ConfigError(f"unknown {method} option {part!r}: use {known}key=value pairs")
    return out


def merge_config(cls: type[C], base: C | None, overrides: Mapping[str, Any]) -> C:
    """``base`` (or the defaults) with ``overrides`` applied and validated; ConfigError names what is wrong
    and lists the valid settings."""
    data = {**(base.model_dump() if base is not None else {}), **overrides}
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or '?'}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        valid = ", ".join(cls.model_fields)
        raise ConfigError(f"invalid {cls.__name__} settings ({problems}); valid settings: {valid}") from None


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
    """Resolve a method from a name (``"symbolic"``, ``"ari"``…), a class or an instance.

    Options may follow the name: ``"symbolic:relax=false"``, ``"ari:oracle"``, ``"timer4:no_rerank"``. A
    method whose constructor takes ``spec`` parses them itself (flags, a positional value); for any other
    they are parsed as ``key=value`` pairs by :func:`parse_options` and passed as keyword arguments. Either
    way they are validated by the method's config (unknown settings are errors)."""
    from . import _builtin  # noqa: F401  (registers the built-in methods)

    if isinstance(spec, str) and ":" in spec:
        name, _, arg = spec.partition(":")
        factory = METHODS.factory(name)
        try:
            takes_spec = "spec" in inspect.signature(factory).parameters
        except (TypeError, ValueError):
            takes_spec = True
        if not takes_spec:
            return METHODS.resolve(name, **{**parse_options(arg, method=name.strip()), **kwargs})
    return METHODS.resolve(spec, **kwargs)
