"""The steps of an LPKG answer's trace (issue #30): one frozen dataclass per kind, written as today's JSON.

* :class:`PlanStep` — ``{"step": "plan", …}``: the planner's reply, whether it parsed, its shape/pattern;
* one step per executed plan line, named by its variable (``{"step": "Ans_1", "call": "Get_Answer", …}``):
  :class:`SearchCall` (``Search``), :class:`GetAnswerCall` (``Get_Answer``, the filled-in sub-questions),
  :class:`CombineCall` (``Intersection`` / ``Union`` / ``Compare``, the input variables),
  :class:`ApplyCall` (a time filter, ``First`` / ``Last``, ``Finish_The_Plan``: one input variable);
  :class:`CallError` (``{"step": var, "error": …}``) where a parsed plan cannot run;
* :class:`EmptyFallbackStep` — ``{"step": "empty_fallback", "reason": …}``: the paper preset's fall-back
  to asking the question directly (the direct plan's steps follow it).

The plan-line steps have no fixed tag (their ``step`` key is the variable); their key sets tell them apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...trace import TraceStep, step_field


@dataclass(frozen=True, eq=False, repr=False)
class PlanStep(TraceStep):
    """The planner's reply: its text, whether it parsed (``error`` why not), the parsed plan's shape and
    pattern, whether the direct plan stands in for it (``fallback``), the planning time."""

    tag = ("step", "plan")
    planner: str
    text: str
    parsed: bool
    error: str
    shape: str | None
    pattern: str | None
    fallback: bool
    seconds: float


@dataclass(frozen=True, eq=False, repr=False)
class EmptyFallbackStep(TraceStep):
    """The paper preset answered the question directly because a sub-answer came out empty (``reason``)."""

    tag = ("step", "empty_fallback")
    reason: str


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class SearchCall(TraceStep):
    """``Search``: the (filled-in) queries, the facts found (a few as ``evidence``), how they were found."""

    var: str = step_field(key="step")
    call: str = "Search"
    queries: list[str]
    n_facts: int
    how: str
    evidence: list[Mapping[str, Any]]


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class GetAnswerCall(TraceStep):
    """``Get_Answer``: the sub-questions asked, their united answers (the first ten labels, the count) and
    a few evidence facts."""

    var: str = step_field(key="step")
    call: str = "Get_Answer"
    queries: list[str]
    answers: list[str]
    n_answers: int
    evidence: list[Mapping[str, Any]]


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class CombineCall(TraceStep):
    """``Intersection`` / ``Union`` / ``Compare`` of the ``inputs`` variables, and its answers."""

    var: str = step_field(key="step")
    call: str
    inputs: list[str]
    answers: list[str]
    n_answers: int
    evidence: list[Mapping[str, Any]]


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class ApplyCall(TraceStep):
    """A step over one variable (``input``): a time filter, ``First`` / ``Last``, ``Finish_The_Plan``."""

    var: str = step_field(key="step")
    call: str
    input: str
    answers: list[str]
    n_answers: int
    evidence: list[Mapping[str, Any]]


#: the plan-line steps that carry answers
AnsweredCall = GetAnswerCall | CombineCall | ApplyCall


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class CallError(TraceStep):
    """A plan line that parsed but could not run: ``{"step": var, "error": …}``.

    Its JSON form has the shape of :class:`~tkgqa.methods.base.RefusedStep`'s, which
    :func:`~tkgqa.trace.read_trace` tries first: a row's error step reads back as a ``RefusedStep``."""

    var: str = step_field(key="step")
    error: str


ExecutionStep = SearchCall | AnsweredCall | CallError

__all__ = [
    "AnsweredCall",
    "ApplyCall",
    "CallError",
    "CombineCall",
    "EmptyFallbackStep",
    "ExecutionStep",
    "GetAnswerCall",
    "PlanStep",
    "SearchCall",
]
