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
from .package import MethodPackage, register_builtin_methods

register_builtin_methods(METHODS)  # every built-in package's methods, as lazy references

__all__ = [
    "METHODS",
    "Answer",
    "Method",
    "MethodConfig",
    "MethodPackage",
    "StepCancelled",
    "StepEvent",
    "StepKind",
    "report_step",
    "resolve_method",
    "step_reporter",
]
