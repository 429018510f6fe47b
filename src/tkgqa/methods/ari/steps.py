"""The steps of an ARI answer's trace (issue #30), shared by ``ari``, ``react_kb`` and ``cot_kb``: the
``setup`` (policy, linked entities and times, masked question, the methodology injected), one ``step`` per
agent step (:class:`~tkgqa.methods.ari.agent.StepRecord`) and the ``final`` one (why the loop stopped)::

    {"type": "setup", "policy": …, "entities": […], "times": […], "masked_question": …,
     "cluster": int, "methodology": str | None}          # the last two only with a methodology cluster
    {"type": "step", "step": i, "candidates": […], "action": str | None, "result": …, "n_results": n,
     "raw_output": …, "note": …, "parse_failed": true, "free_answer": true}   # the last four when set
    {"type": "final", "stop": …, "forced": bool, "n_actions": n}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...trace import TraceStep, step_field
from .agent import StepRecord


@dataclass(frozen=True, eq=False, repr=False)
class SetupStep(TraceStep):
    """What the episode started from; ``cluster``/``methodology`` are written (both) only when the question
    was matched to a methodology cluster (whose methodology may be missing: ``None``)."""

    tag = ("type", "setup")
    policy: str
    entities: list[str]
    times: list[str]
    masked_question: str
    cluster: int | None = step_field(omit_default=True, default=None)
    methodology: str | None = step_field(omit_default=True, default=None)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if self.cluster is None:
            out.pop("methodology", None)
        else:
            out["methodology"] = self.methodology
        return out


@dataclass(frozen=True, eq=False, repr=False)
class AgentStep(TraceStep):
    """One step of the agent loop: the candidates offered, the action taken (``None``: the policy gave
    none) and its result; the optional keys are written only when set."""

    tag = ("type", "step")
    step: int  # the step's index in the episode (from 0)
    candidates: list[str]
    action: str | None
    result: str
    n_results: int
    raw_output: str = step_field(omit_default=True, default="")
    note: str = step_field(omit_default=True, default="")
    parse_failed: bool = step_field(omit_default=True, default=False)
    free_answer: bool = step_field(omit_default=True, default=False)

    @classmethod
    def of(cls, record: StepRecord) -> AgentStep:
        return cls(
            record.index,
            list(record.candidates),
            record.action,
            record.result,
            record.n_results,
            record.raw_output,
            record.note,
            record.parse_failed,
            record.free_answer,
        )


@dataclass(frozen=True, eq=False, repr=False)
class FinalStep(TraceStep):
    """How the episode ended: the stop reason, whether the answer was forced from the last list
    (``fallback_answer``) and how many actions were taken."""

    tag = ("type", "final")
    stop: str
    forced: bool
    n_actions: int
