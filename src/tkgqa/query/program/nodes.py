"""The typed program a question is parsed into: a small tree of frozen dataclasses, and its printer.

Grammar (``Rows`` are facts, each binding the answer variable ``?`` to an entity, or to nothing when both
sides are known)::

    Program  := Entities(Rows, order ∈ AnswerOrder) | Times(Rows, granularity, use_end, order)
    Rows     := Match(subject?, relation, object?, inverse?, both_directions)
              | Hop(Rows, relation, inverse)                     (one step on from the entities of Rows)
              | Combine(op ∈ SetOperation, Rows, Rows…)          (and: answers of every part; or: of any)
              | Compare((name, Rows)…, mode ∈ CompareMode)       (the winning name, on its own facts)
              | Filter(Rows, op ∈ TemporalRelation, TimeExpr)
              | Select(Rows, which ∈ Extreme, n)                 (n-th distinct start time)
              | Exclude(Rows, entities)
              | Fallback(Rows, Rows)                             (the second when the first is empty)
    TimeExpr := Const(TimePoint, end?) | TimeOf(Rows, which ∈ ReferenceTime, granularity?)

``Hop``, ``Combine`` and ``Compare`` are the multi-hop shapes of LPKG's patterns (chains, intersections,
unions, comparisons: :mod:`tkgqa.query.generate.patterns` builds every pattern as such a program). Closed
choices are enums (a string is accepted and checked at construction: ``Filter(rows, "befor", t)`` is a
:class:`~tkgqa.errors.ConfigError`). The temporal relations mean what :mod:`tkgqa.time.semantics` says.

Printed, e.g.::

    entities(first(after(match(?, Make_a_visit, Iraq),
                         time(first, match(Defense_/_Security_Ministry_(Denmark), Make_a_visit, Iraq)))))
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar, assert_never

from ...errors import ConfigError, DataError
from ...time import Extreme, Granularity, TemporalRelation, TimePoint, parse_time
from ...time.semantics import parse_choice
from .answer_sets import CompareMode

E = TypeVar("E", bound=StrEnum)


class ReferenceTime(StrEnum):
    """Which time of the reference rows a :class:`TimeOf` reads: the first or last fact's start, or the
    first fact's whole span."""

    FIRST = "first"
    LAST = "last"
    SPAN = "span"


class SetOperation(StrEnum):
    """How :class:`Combine` joins its parts: ``and`` — the answers every part finds; ``or`` — any part."""

    AND = "and"
    OR = "or"


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

    def arguments(self) -> tuple[str, str, str]:
        """Its printed arguments: subject (``?`` for the answer), relation (``*`` for any, ``|~inverse``,
        ``|<->`` for both directions), object."""
        rel = self.relation or "*"
        if self.inverse:
            rel += f"|~{self.inverse}"
        if self.both_directions:
            rel += "|<->"
        return self.subject or "?", rel, self.object or "?"

    def __str__(self) -> str:
        return f"match({', '.join(self.arguments())})"


@dataclass(frozen=True, slots=True)
class Const:
    """A constant time: ``point``, or (``end`` given) the range from ``point`` to ``end``, both included."""

    point: TimePoint
    end: TimePoint | None = None

    def __str__(self) -> str:
        return self.point.iso() if self.end is None else f"{self.point.iso()}..{self.end.iso()}"


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


@dataclass(frozen=True, slots=True)
class Hop:
    """Facts one ``relation`` step on from the entities ``rows`` binds: with such an entity as subject (the
    answer is the object) or, ``inverse``, as object (the answer is the subject); never back to one of
    those entities. A chain of projections (LPKG's ``2p``/``3p``)."""

    rows: Rows
    relation: str
    inverse: bool = False

    def __str__(self) -> str:
        return f"hop({self.rows}, {'~' if self.inverse else ''}{self.relation})"


@dataclass(frozen=True, slots=True)
class Combine:
    """The facts of ``parts`` joined on their answers: ``and`` keeps the facts whose answer every part
    binds (an intersection), ``or`` keeps them all (a union)."""

    op: SetOperation
    parts: tuple[Rows, ...]

    def __post_init__(self) -> None:
        _enum(self, "op", SetOperation)
        if not self.parts:
            raise ConfigError("Combine needs at least one part")

    def __str__(self) -> str:
        return f"{self.op}({', '.join(map(str, self.parts))})"


@dataclass(frozen=True, slots=True)
class Compare:
    """Which of the named ``candidates`` wins, each judged on its own rows: the earliest / latest first
    start (``earlier`` / ``later``), or the largest / smallest first number among its answers (``more`` /
    ``less``: :func:`~.answer_sets.compare`). The winners' facts, each bound to the winner's name."""

    candidates: tuple[tuple[str, Rows], ...]
    mode: CompareMode

    def __post_init__(self) -> None:
        _enum(self, "mode", CompareMode)
        if not self.candidates:
            raise ConfigError("Compare needs at least one candidate")

    def __str__(self) -> str:
        named = ", ".join(f"{name}: {rows}" for name, rows in self.candidates)
        return f"compare({self.mode}, {named})"


Rows = Match | Hop | Combine | Compare | Filter | Select | Exclude | Fallback


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


Node = Program | Rows | TimeExpr


def children(node: Node) -> tuple[Node, ...]:
    """The nodes ``node`` reads, in the order of its printed form (the path ``0.1`` is the second child of
    the root's first child: :func:`paths`)."""
    match node:
        case Entities() | Times() | Select() | Exclude() | TimeOf() | Hop():
            return (node.rows,)
        case Combine():
            return node.parts
        case Compare():
            return tuple(rows for _, rows in node.candidates)
        case Filter():
            return (node.rows, node.time)
        case Fallback():
            return (node.primary, node.alternative)
        case Match() | Const():
            return ()
        case _:
            assert_never(node)


def paths(node: Node, at: str = "") -> Iterator[tuple[str, Node]]:
    """Every node under ``node`` with its path (``""`` for ``node``, ``"0"``, ``"0.1"``…), root first."""
    yield at, node
    for k, child in enumerate(children(node)):
        yield from paths(child, f"{at}.{k}" if at else str(k))


# --- as JSON (a trace records the program it ran: :meth:`~.executor.Executor.run`) -------------------------
def to_dict(node: Node) -> dict[str, Any]:
    """``node`` as a JSON object: ``{"node": "filter", "op": "in", "rows": {…}, "time": {…}}``."""
    match node:
        case Match():
            names = {"subject": node.subject, "relation": node.relation, "object": node.object}
            return {
                "node": "match",
                **names,
                "inverse": node.inverse,
                "both_directions": node.both_directions,
            }
        case Const():
            # "end" only for a range: a point constant serialises as it did before ranges existed
            end = {"end": node.end.iso()} if node.end else {}
            return {"node": "const", "point": node.point.iso(), **end}
        case TimeOf():
            gran = node.granularity.name.lower() if node.granularity else None
            return {
                "node": "time_of",
                "rows": to_dict(node.rows),
                "which": str(node.which),
                "granularity": gran,
            }
        case Filter():
            return {
                "node": "filter",
                "rows": to_dict(node.rows),
                "op": str(node.op),
                "time": to_dict(node.time),
            }
        case Hop():
            return {
                "node": "hop",
                "rows": to_dict(node.rows),
                "relation": node.relation,
                "inverse": node.inverse,
            }
        case Combine():
            return {"node": "combine", "op": str(node.op), "parts": [to_dict(p) for p in node.parts]}
        case Compare():
            named = [{"name": name, "rows": to_dict(rows)} for name, rows in node.candidates]
            return {"node": "compare", "mode": str(node.mode), "candidates": named}
        case Select():
            return {"node": "select", "rows": to_dict(node.rows), "which": str(node.which), "n": node.n}
        case Exclude():
            return {"node": "exclude", "rows": to_dict(node.rows), "entities": list(node.entities)}
        case Fallback():
            return {
                "node": "fallback",
                "primary": to_dict(node.primary),
                "alternative": to_dict(node.alternative),
            }
        case Entities():
            return {"node": "entities", "rows": to_dict(node.rows), "order": str(node.order)}
        case Times():
            gran = node.granularity.name.lower() if node.granularity else None
            return {"node": "times", "rows": to_dict(node.rows), "granularity": gran, "use_end": node.use_end,
                    "order": str(node.order)}  # fmt: skip
        case _:
            assert_never(node)


#: The deepest program :func:`from_dict` reads (a recorded program is a few levels deep).
MAX_DEPTH = 64


def from_dict(data: Any, depth: int = 0) -> Node:
    """The node :func:`to_dict` wrote; :class:`~tkgqa.errors.DataError` for anything else (a trace read
    from a run folder is outside input)."""
    if depth > MAX_DEPTH:
        raise DataError(f"a program nested deeper than {MAX_DEPTH} levels")
    try:
        return _node(data, depth + 1)
    except (KeyError, TypeError, ValueError, AttributeError, ConfigError) as exc:
        raise DataError(f"not a recorded program node ({type(exc).__name__}: {str(exc)[:200]})") from None


def _name(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"a name must be a string or null, got {type(value).__name__}")
    return value


def _node(d: dict[str, Any], depth: int) -> Node:
    kind = d["node"]
    if kind == "match":
        return Match(_name(d["subject"]), _name(d["relation"]), _name(d["object"]), _name(d.get("inverse")),
                     bool(d.get("both_directions", False)))  # fmt: skip
    if kind == "const":
        end = d.get("end")
        return Const(parse_time(str(d["point"])), parse_time(str(end)) if end is not None else None)
    if kind == "time_of":
        rows = _rows(from_dict(d["rows"], depth))
        return TimeOf(rows, ReferenceTime(d["which"]), Granularity.parse(d.get("granularity")))
    if kind == "entities":
        return Entities(_rows(from_dict(d["rows"], depth)), AnswerOrder(d.get("order", "count")))
    if kind == "times":
        rows = _rows(from_dict(d["rows"], depth))
        gran = Granularity.parse(d.get("granularity"))
        return Times(rows, gran, bool(d.get("use_end", False)), AnswerOrder(d.get("order", "count")))
    return _rows_node(kind, d, depth)


def _rows_node(kind: str, d: dict[str, Any], depth: int) -> Rows:
    if kind == "filter":
        time = from_dict(d["time"], depth)
        if not isinstance(time, Const | TimeOf):
            raise TypeError("a filter's time must be a const or time_of node")
        return Filter(_rows(from_dict(d["rows"], depth)), TemporalRelation(d["op"]), time)
    if kind == "hop":
        return Hop(_rows(from_dict(d["rows"], depth)), _text(d["relation"]), bool(d.get("inverse", False)))
    if kind == "combine":
        return Combine(SetOperation(d["op"]), tuple(_rows(from_dict(p, depth)) for p in _items(d["parts"])))
    if kind == "compare":
        named = tuple((_text(c["name"]), _rows(from_dict(c["rows"], depth))) for c in _items(d["candidates"]))
        return Compare(named, CompareMode(d["mode"]))
    if kind == "select":
        return Select(_rows(from_dict(d["rows"], depth)), Extreme(d["which"]), int(d.get("n", 1)))
    if kind == "exclude":
        return Exclude(_rows(from_dict(d["rows"], depth)), tuple(str(e) for e in d["entities"]))
    if kind == "fallback":
        return Fallback(_rows(from_dict(d["primary"], depth)), _rows(from_dict(d["alternative"], depth)))
    raise ValueError(f"unknown program node {kind!r}")


#: The most parts (or candidates) :func:`from_dict` reads in one node.
MAX_PARTS = 64


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"a name must be a string, got {type(value).__name__}")
    return value


def _items(value: Any) -> list[Any]:
    if not isinstance(value, list) or len(value) > MAX_PARTS:
        raise TypeError(f"expected a list of at most {MAX_PARTS} nodes")
    return value


def _rows(node: Node) -> Rows:
    if not isinstance(node, Match | Hop | Combine | Compare | Filter | Select | Exclude | Fallback):
        raise TypeError(f"{type(node).__name__.lower()} where facts were expected")
    return node
