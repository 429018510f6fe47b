"""The trace steps of the symbolic reasoner (:class:`~tkgqa.trace.TraceStep` dataclasses): what the
question parser saw, the program, one step per program node the executor ran, the reference events its
time expressions read, and the run as data (what the UI's program tree and decision facts are drawn from).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...trace import TraceStep, step_field


@dataclass(frozen=True, eq=False, repr=False)
class ParseStep(TraceStep):
    """What the question parser saw (``{"parse": {...}}``): entities, relation, times, the reason."""

    parse: Mapping[str, Any]


@dataclass(frozen=True, eq=False, repr=False)
class ProgramStep(TraceStep):
    """The program run, as printed (``{"program": "entities(...)"}``)."""

    program: str


@dataclass(frozen=True, eq=False, repr=False)
class NodeStep(TraceStep):
    """One program node the executor ran: its operator, the rows it found; a ``select`` node also lists
    its first candidate facts (``candidates``) and how many there were (``pool``)."""

    op: str
    facts: int
    candidates: list[Mapping[str, Any]] | None = step_field(omit_default=True, default=None)
    pool: int | None = step_field(omit_default=True, default=None)


@dataclass(frozen=True, eq=False, repr=False)
class TimeStep(TraceStep):
    """The reference event a time expression read: the time it gave and the fact it came from."""

    tag = ("op", "time")
    value: str
    reference: Mapping[str, Any]


@dataclass(frozen=True, eq=False, repr=False)
class ExecutedStep(TraceStep):
    """The run as data (:meth:`~.executor.Executor.executed`): ``{"program": ..., "facts": {path: n}}``."""

    executed: Mapping[str, Any]
