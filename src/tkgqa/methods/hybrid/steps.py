"""The steps of a hybrid answer's trace (issue #30): the :class:`RouteStep` first, then each step of the
primary's and the fallback's traces wrapped in a :class:`StagedStep` (whatever the methods' step classes)::

    {"type": "route", "route": "primary" | "fallback", "answered_by": str | None, "primary": …,
     "primary_abstained": bool, "primary_reason": …, "fallback": …, "fallback_reason": …}
    {**step, "stage": "primary" | "fallback"}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from ...trace import TraceStep, read_step, step_field, writes_back

#: the stages a hybrid answer's steps are tagged with
STAGES = ("primary", "fallback")


@dataclass(frozen=True, eq=False, repr=False)
class RouteStep(TraceStep):
    """Which method answered: ``route`` ``primary`` (the primary answered) or ``fallback``; ``fallback`` and
    ``fallback_reason`` are written only when the fallback ran."""

    tag = ("type", "route")
    route: str
    answered_by: str | None
    primary: str
    primary_abstained: bool
    primary_reason: str
    fallback: str | None = step_field(omit_default=True, default=None)
    fallback_reason: str | None = step_field(omit_default=True, default=None)


@dataclass(frozen=True, eq=False, repr=False)
class StagedStep(TraceStep):
    """A step of the primary's or the fallback's trace (any :class:`TraceStep`), tagged with its
    ``stage``: its JSON form is the step's with ``"stage"`` set (added last, or replacing one it has)."""

    step: TraceStep
    stage: str

    @property
    def unwrapped(self) -> TraceStep:
        """The part's own step (so readers find, e.g., the symbolic program in a hybrid's trace)."""
        return self.step.unwrapped

    def to_dict(self) -> dict[str, Any]:
        out = self.step.to_dict()
        out["stage"] = self.stage
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self | None:
        stage = data.get("stage")
        if stage not in STAGES:
            return None
        assert isinstance(stage, str)
        step = cls(read_step({k: v for k, v in data.items() if k != "stage"}), stage)
        return step if writes_back(step, data) else None
