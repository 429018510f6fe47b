"""``hybrid``: the offline symbolic reasoner first, an LLM method only when it abstains.

The primary method (``symbolic`` by default, no LLM) answers what it can parse and execute; a question it
abstains on (or answers with nothing) is routed to the fallback method (``ari`` with policy ``llm`` by
default), which gets the ``llm`` (and ``policy``) options. The answer's trace starts with a ``route`` step::

    {"type": "route", "route": "primary" | "fallback", "answered_by": "symbolic" | "ari" | None,
     "primary": "symbolic", "primary_abstained": bool, "primary_reason": str,
     "fallback": "ari", "fallback_reason": str}        # the last two only when the fallback ran

followed by the primary's steps and then the fallback's, each tagged ``"stage": "primary"|"fallback"``
(:mod:`.steps`: a :class:`~.steps.RouteStep`, then :class:`~.steps.StagedStep` wrappers).
Usage is the sum of both. The primary and the fallback each take their own options as a dict
(``primary_options`` / ``fallback_options``), so nothing needs escaping::

    resolve_method("hybrid", fallback="ari", fallback_options={"policy": "llm", "t_max": 3}, llm=...)
    tkgqa eval --method hybrid --method-option fallback=ari --fallback-option policy=llm \
        --fallback-option t_max=3 --llm SPEC

The short string form stays for ``--method``::

    hybrid                                   # symbolic → ari (policy llm); needs --llm
    hybrid:llm_only                          # symbolic → llm_only
    hybrid:primary=symbolic,fallback=kg_rag,llm=llamacpp:smollm2
    hybrid:fallback=ari:policy=llm;t_max=3   # legacy: ';' separates the fallback's own options
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from pydantic import ConfigDict, Field

from ...datasets.base import Question
from ...errors import ConfigError
from ...kg.base import KGStore
from ...llm.base import LLMBackend
from ...outcomes import AbstainReason
from ...trace import TraceStep
from ..base import Answer, Method, MethodConfig, parse_options, resolve_method
from ..client import client_option
from .steps import RouteStep, StagedStep


class HybridConfig(MethodConfig):
    """Settings of the hybrid router (unknown keys are rejected, to catch typos in ``--method``)."""

    model_config = ConfigDict(extra="forbid")

    primary: str = Field(default="symbolic", description="method tried first")
    primary_options: dict[str, Any] = Field(
        default_factory=dict, description="options of the primary method (its config's settings)"
    )
    fallback: str = Field(default="ari", description="method used when the primary abstains")
    fallback_options: dict[str, Any] = Field(
        default_factory=dict, description="options of the fallback method (win over llm/policy below)"
    )
    llm: str | None = Field(default=None, description="LLM spec handed to the fallback")
    policy: str | None = client_option(
        None, description="policy handed to the fallback (ari: llm by default)"
    )


def parse_hybrid_spec(spec: str) -> dict[str, str]:
    """``"llm_only"`` → ``{"fallback": "llm_only"}``; ``"fallback=ari:policy=llm;t_max=3,llm=fake"`` →
    ``{"fallback": "ari:policy=llm;t_max=3", "llm": "fake"}`` (the legacy nested form: the fallback's own
    options after ``:``, separated by ``;``; prefer ``fallback_options``)."""
    if "=" not in spec.partition(":")[0]:
        return {"fallback": spec.strip()}
    return parse_options(spec, method="hybrid")


def _tagged(steps: Sequence[TraceStep], stage: str) -> list[StagedStep]:
    return [StagedStep(step, stage) for step in steps]


def _answered(answer: Answer) -> bool:
    return not answer.abstained and bool(answer.answers)


class HybridMethod(Method):
    """Routes each question: the primary (offline) method's answer, else the fallback (LLM) method's.

    ``primary``/``fallback`` may also be given as method instances (their names go into the config)."""

    name = "hybrid"

    config_class = HybridConfig
    config: HybridConfig

    def __init__(
        self,
        config: HybridConfig | None = None,
        *,
        llm: str | LLMBackend | None = None,
        spec: str | None = None,
        primary: str | Method | None = None,
        fallback: str | Method | None = None,
        **overrides: Any,
    ) -> None:
        self._given = {"primary": primary, "fallback": fallback}
        for key, given in self._given.items():
            if given is not None:
                overrides[key] = given if isinstance(given, str) else given.name
        super().__init__(config, llm=llm, spec=spec, **overrides)

    @classmethod
    def parse_spec(cls, spec: str | None) -> dict[str, Any]:
        return parse_hybrid_spec(spec) if spec else {}

    def resolve_llm(self, given: str | LLMBackend | None) -> LLMBackend | None:
        """A backend given is handed to the fallback; a spec is resolved by the fallback itself."""
        return given if isinstance(given, LLMBackend) else None

    def setup(self) -> None:
        if self.config.fallback.partition(":")[0].strip().lower() == self.name:
            raise ConfigError("the hybrid method's fallback cannot be 'hybrid' itself")
        primary, fallback = self._given["primary"], self._given["fallback"]
        self.primary: Method = (
            primary if isinstance(primary, Method) else self._build("primary", self.config.primary, {})
        )
        self.fallback: Method = (
            fallback if isinstance(fallback, Method) else self._build_fallback(self.llm or self.config.llm)
        )

    def _build_fallback(self, llm: str | LLMBackend | None) -> Method:
        given: dict[str, Any] = {}
        if llm is not None:
            given["llm"] = llm
        if self.config.policy is not None:
            given["policy"] = self.config.policy
        try:
            return self._build("fallback", self.config.fallback, given)
        except ConfigError as exc:
            if llm is not None:
                raise
            raise ConfigError(f"{exc}; pass an LLM (--llm SPEC) or a fallback that needs none") from exc

    def _build(self, role: str, spec: str, given: dict[str, Any]) -> Method:
        """The ``role`` method from its spec (a name, or the legacy ``name:a=1;b=2``), the options handed
        down (``given``) and its own ``<role>_options`` (which win)."""
        own: dict[str, Any] = getattr(self.config, f"{role}_options")
        try:
            return resolve_method(spec.replace(";", ","), **{**given, **own})
        except ConfigError as exc:
            raise ConfigError(f"hybrid: cannot build the {role} {spec!r}: {exc}") from exc

    def reason(self, question: Question, kg: KGStore) -> Answer:
        first = self.primary.answer(question, kg)
        route = RouteStep(
            route="primary",
            answered_by=self.primary.name,
            primary=self.primary.name,
            primary_abstained=not _answered(first),
            primary_reason=first.reason_text,
        )
        primary_steps = _tagged(first.trace, "primary")
        if _answered(first):
            return dataclasses.replace(first, trace=[route, *primary_steps])
        second = self.fallback.answer(question, kg)
        route = dataclasses.replace(
            route,
            route="fallback",
            answered_by=self.fallback.name if _answered(second) else None,
            fallback=self.fallback.name,
            fallback_reason=second.reason_text,
        )
        trace: list[TraceStep] = [route, *primary_steps, *_tagged(second.trace, "fallback")]
        usage = first.usage + second.usage
        if _answered(second):
            return dataclasses.replace(second, trace=trace, usage=usage)
        reason = AbstainReason.BOTH_ABSTAINED.note(
            primary=self.primary.name,
            primary_reason=first.reason_text or "no answer",
            fallback=self.fallback.name,
            fallback_reason=second.reason_text or "no answer",
        )
        return Answer.abstain(
            reason, trace=trace, usage=usage, evidence=second.evidence, raw_output=second.raw_output
        )

    def describe(self) -> dict[str, Any]:
        fallback = self.fallback.describe()
        return {
            **super().describe(),
            "llm": fallback.get("llm"),
            "primary": self.primary.describe(),
            "fallback": fallback,
        }
