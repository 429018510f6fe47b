"""QA methods; all return :class:`Answer`."""

from .base import (
    METHODS,
    Answer,
    Method,
    MethodConfig,
    StepCancelled,
    StepEvent,
    StepKind,
    report_step,
    resolve_method,
    step_reporter,
)

__all__ = [
    "METHODS",
    "Answer",
    "Method",
    "MethodConfig",
    "StepCancelled",
    "StepEvent",
    "StepKind",
    "report_step",
    "resolve_method",
    "step_reporter",
]
