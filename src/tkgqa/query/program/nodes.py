"""The typed program a question is parsed into: a small tree of frozen dataclasses, and its printer.

Grammar (``Rows`` are facts, each binding the answer variable ``?`` to an entity, or to nothing when both
sides are known)::

    Program  := Entities(Rows, order ∈ AnswerOrder) | Times(Rows, granularity, use_end, order)
    Rows     := Match(subject?, relation, object?, inverse?, both_directions)
              | Filter(Rows, op ∈ TemporalRelation, TimeExpr)
              | Select(Rows, which ∈ Extreme, n)                 (n-th distinct start time)
              | Exclude(Rows, entities)
              | Fallback(Rows, Rows)                             (the second when the first is empty)
    TimeExpr := Const(TimePoint) | TimeOf(Rows, which ∈ ReferenceTime, granularity?)

Closed choices are enums (a string is accepted and checked at construction: ``Filter(rows, "befor", t)`` is a
:class:`~tkgqa.errors.ConfigError`). The temporal relations mean what :mod:`tkgqa.time.semantics` says.

Printed, e.g.::

    entities(first(after(match(?, Make_a_visit, Iraq),
                         time(first, match(Defense_/_Security_Ministry_(Denmark), Make_a_visit, Iraq)))))
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from ...errors import ConfigError
from ...time import Extreme, Granularity, TemporalRelation, TimePoint
from ...time.semantics import parse_choice

E = TypeVar("E", bound=StrEnum)


class ReferenceTime(StrEnum):
    """Which time of the reference rows a :class:`TimeOf` reads: the first or last fact's start, or the
    first fact's whole span."""

    FIRST = "first"
    LAST = "last"
    SPAN = "span"


class AnswerOrder(StrEnum):
    """How answers are ranked: most supporting facts first (``count``), latest fact first (``recent``),
    earliest fact first (``earliest``)."""

    COUNT = "count"
    RECENT = "recent"
    EARLIEST = "earliest"


def _enum(obj: object, attr: str, cls: type[E]) -> None:
    value = parse_choice(cls, getattr(obj, attr), f"{type(obj).__name__}.{attr}")
    object.__setattr__(obj, attr, value)


@dataclass(frozen=True, slots=True)
class Match:
    """Facts ``(subject, relation, object)``; ``None`` marks the answer variable.

    ``inverse`` names the converse relation (``Host_a_visit`` for ``Make_a_visit``): its facts are read with
    subject and object swapped. ``both_directions`` also reads ``relation`` itself swapped (symmetric use).
    ``relation`` ``None`` matches any relation (used over small per-question contexts).
    """

    subject: str | None
    relation: str | None
    object: str | None
    inverse: str | None = None
    both_directions: bool = False

    def __str__(self) -> str:
        rel = self.relation or "*"
        if self.inverse:
            rel += f"|~{self.inverse}"
        if self.both_directions:
            rel += "|<->"
        return f"match({self.subject or '?'}, {rel}, {self.object or '?'})"


@dataclass(frozen=True, slots=True)
class Const:
    point: TimePoint

    def __str__(self) -> str:
        return self.point.iso()


@dataclass(frozen=True, slots=True)
class TimeOf:
    """The start time of the first (or last) fact of ``rows``, optionally coarsened; ``span``: the whole
    interval of the first fact."""

    rows: Rows
    which: ReferenceTime = ReferenceTime.FIRST
    granularity: Granularity | None = None

    def __post_init__(self) -> None:
        _enum(self, "which", ReferenceTime)

    def __str__(self) -> str:
        gran = f", {self.granularity.name.lower()}" if self.granularity else ""
        return f"time({self.which}, {self.rows}{gran})"


TimeExpr = Const | TimeOf


@dataclass(frozen=True, slots=True)
class Filter:
    """Facts of ``rows`` that are ``in`` (share a day with), ``before`` or ``after`` the time, or that start
    (``starts``) / end (``ends``) within it."""

    rows: Rows
    op: TemporalRelation
    time: TimeExpr

    def __post_init__(self) -> None:
        _enum(self, "op", TemporalRelation)

    def __str__(self) -> str:
        return f"{self.op}({self.rows}, {self.time})"


@dataclass(frozen=True, slots=True)
class Select:
    """The facts at the ``n``-th earliest (``first``) or latest (``last``) distinct start time."""

    rows: Rows
    which: Extreme
    n: int = 1

    def __post_init__(self) -> None:
        _enum(self, "which", Extreme)
        if self.n < 1:
            raise ConfigError(f"Select.n must be >= 1, got {self.n}")

    def __str__(self) -> str:
        nth = f", {self.n}" if self.n != 1 else ""
        return f"{self.which}({self.rows}{nth})"


@dataclass(frozen=True, slots=True)
class Exclude:
    """Facts whose answer binding is none of ``entities``."""

    rows: Rows
    entities: tuple[str, ...]

    def __str__(self) -> str:
        return f"exclude({self.rows}, {', '.join(self.entities)})"


@dataclass(frozen=True, slots=True)
class Fallback:
    """``primary`` unless it finds nothing, then ``alternative``."""

    primary: Rows
    alternative: Rows

    def __str__(self) -> str:
        return f"({self.primary} ?? {self.alternative})"


Rows = Match | Filter | Select | Exclude | Fallback


@dataclass(frozen=True, slots=True)
class Entities:
    """Answer: the entities bound to ``?``; ``order`` ranks them (``count``: most facts first; ``recent``:
    latest fact first; ``earliest``: earliest fact first)."""

    rows: Rows
    order: AnswerOrder = AnswerOrder.COUNT

    def __post_init__(self) -> None:
        _enum(self, "order", AnswerOrder)

    def __str__(self) -> str:
        suffix = f", {self.order}" if self.order != "count" else ""
        return f"entities({self.rows}{suffix})"


@dataclass(frozen=True, slots=True)
class Times:
    """Answer: the start (or end) times of the facts, at ``granularity`` (``None``: as stored)."""

    rows: Rows
    granularity: Granularity | None = None
    use_end: bool = False
    order: AnswerOrder = AnswerOrder.COUNT

    def __post_init__(self) -> None:
        _enum(self, "order", AnswerOrder)

    def __str__(self) -> str:
        gran = self.granularity.name.lower() if self.granularity else "as-stored"
        end = ", end" if self.use_end else ""
        return f"times({self.rows}, {gran}{end})"


Program = Entities | Times


def pretty(program: Program | Rows | TimeExpr) -> str:
    """One-line text of a program (same as ``str``)."""
    return str(program)
