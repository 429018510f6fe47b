"""The typed program a question is parsed into: a small tree of frozen dataclasses, and its printer.

Grammar (``Rows`` are facts, each binding the answer variable ``?`` to an entity, or to nothing when both
sides are known)::

    Program  := Entities(Rows, order) | Times(Rows, granularity, use_end)
    Rows     := Match(subject?, relation, object?, inverse?, both_directions)
              | Filter(Rows, op ∈ {in, before, after, starts, ends}, TimeExpr)
              | Select(Rows, which ∈ {first, last}, n)          (n-th distinct start time)
              | Exclude(Rows, entities)
              | Fallback(Rows, Rows)                             (the second when the first is empty)
    TimeExpr := Const(TimePoint) | TimeOf(Rows, which ∈ {first, last, span}, granularity?)

Printed, e.g.::

    entities(first(after(match(?, Make_a_visit, Iraq),
                         time(first, match(Defense_/_Security_Ministry_(Denmark), Make_a_visit, Iraq)))))
"""

from __future__ import annotations

from dataclasses import dataclass

from ...time import Granularity, TimePoint


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
    which: str = "first"
    granularity: Granularity | None = None

    def __str__(self) -> str:
        gran = f", {self.granularity.name.lower()}" if self.granularity else ""
        return f"time({self.which}, {self.rows}{gran})"


TimeExpr = Const | TimeOf


@dataclass(frozen=True, slots=True)
class Filter:
    """Facts of ``rows`` that are ``in`` (share a day with), ``before`` or ``after`` the time, or that start
    (``starts``) / end (``ends``) within it."""

    rows: Rows
    op: str
    time: TimeExpr

    def __str__(self) -> str:
        return f"{self.op}({self.rows}, {self.time})"


@dataclass(frozen=True, slots=True)
class Select:
    """The facts at the ``n``-th earliest (``first``) or latest (``last``) distinct start time."""

    rows: Rows
    which: str
    n: int = 1

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
    order: str = "count"

    def __str__(self) -> str:
        suffix = f", {self.order}" if self.order != "count" else ""
        return f"entities({self.rows}{suffix})"


@dataclass(frozen=True, slots=True)
class Times:
    """Answer: the start (or end) times of the facts, at ``granularity`` (``None``: as stored)."""

    rows: Rows
    granularity: Granularity | None = None
    use_end: bool = False
    order: str = "count"

    def __str__(self) -> str:
        gran = self.granularity.name.lower() if self.granularity else "as-stored"
        end = ", end" if self.use_end else ""
        return f"times({self.rows}, {gran}{end})"


Program = Entities | Times


def pretty(program: Program | Rows | TimeExpr) -> str:
    """One-line text of a program (same as ``str``)."""
    return str(program)
