"""KG patterns: the shapes of complex questions and their grounded instances.

A *pattern* is the abstract shape of a complex question (LPKG, Wang et al. 2024, Figure 3, after BetaE's
query structures): ``1p``/``2p``/``3p`` chains of projections, ``2i``/``3i`` intersections, ``2u`` union,
``ip``/``pi`` intersection-projection mixes and ``compare``; plus the temporal patterns a TKG needs: ``t?``
(when did it happen), ``in`` (at a given time), ``before``/``after`` an anchor event, ``first``/``last``,
``between`` two times, and the composed ``after_first``/``before_last`` (MultiTQ's "Multiple" questions).

An :class:`Instance` is a pattern grounded in a store (sampled by :mod:`.grounding`): a tiny DAG of typed
nodes (:data:`Node`: :class:`Projection`, :class:`WhenQ`, :class:`SetOp`, :class:`TimeFilter`,
:class:`Pick`, :class:`Compare`) whose last node is the answer, with the gold answers computed by
:func:`evaluate` — KG look-ups (:func:`project`, :func:`when`) and the answer-set operations of
:mod:`tkgqa.query.program.answer_sets` (each answer keeps the facts supporting it; the one time semantics:
:func:`~tkgqa.time.holds`, :func:`~tkgqa.time.extreme`). No question text: verbalising an instance is
:mod:`.verbalize`'s job. Nodes serialise as JSON objects (:func:`node_to_dict`; a projection's kind is
``hop``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, assert_never

from ...errors import DataError
from ...kg.base import KGStore
from ...kg.fact import Fact
from ...time import Extreme, Granularity, Interval, TemporalRelation, TimePoint, parse_time
from ..program import answer_sets as ops
from ..program.answer_sets import AnswerSet, CompareMode, ValueKind
from ..program.nodes import Const, Entities, Filter, Match, Program, Select, TimeOf, Times
from ..text.frame import asks_time as asks_time  # the one time-question reader (re-exported)


class PatternType(StrEnum):
    """The grounded patterns: LPKG's nine plus the temporal ones."""

    P1 = "1p"
    P2 = "2p"
    P3 = "3p"
    I2 = "2i"
    I3 = "3i"
    U2 = "2u"
    IP = "ip"
    PI = "pi"
    COMPARE = "compare"
    TIME = "t?"
    IN = "in"
    BEFORE = "before"
    AFTER = "after"
    FIRST = "first"
    LAST = "last"
    BETWEEN = "between"
    AFTER_FIRST = "after_first"
    BEFORE_LAST = "before_last"


#: LPKG's patterns (Figure 3), the ones CLQA-Wiki is built from.
LPKG_PATTERNS = tuple(PatternType)[:9]
TEMPORAL_PATTERNS = tuple(PatternType)[9:]


class SetOperation(StrEnum):
    AND = "and"
    OR = "or"


# --- nodes ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Projection:
    """One relation step from ``source`` (an entity, or the entities of node ``source``) along ``relation``;
    ``inverse``: the source is the fact's object and the answers are subjects."""

    source: str | int
    relation: str
    inverse: bool = False


@dataclass(frozen=True, slots=True)
class WhenQ:
    """The times of the facts ``(subject, relation, object)``, coarsened to ``granularity`` if given."""

    subject: str
    relation: str
    object: str
    granularity: Granularity | None = None


@dataclass(frozen=True, slots=True)
class SetOp:
    op: SetOperation
    inputs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TimeFilter:
    """Answers of node ``input`` with a fact in ``relation`` to a time: node ``time``'s earliest time, or a
    constant (``end`` set: the range ``time..end``)."""

    input: int
    relation: TemporalRelation
    time: int | TimePoint
    end: TimePoint | None = None


@dataclass(frozen=True, slots=True)
class Pick:
    """The answers of node ``input`` at the earliest (``first``) or latest (``last``) time."""

    input: int
    which: Extreme


@dataclass(frozen=True, slots=True)
class Compare:
    """Which of ``candidates`` wins on the values of nodes ``inputs`` (one per candidate)."""

    inputs: tuple[int, ...]
    candidates: tuple[str, ...]
    mode: CompareMode


Node = Projection | WhenQ | SetOp | TimeFilter | Pick | Compare


# --- evaluation ------------------------------------------------------------------------------------------
def project(kg: KGStore, sources: Iterable[str], relation: str, inverse: bool) -> AnswerSet:
    """Entities one ``relation`` step away from ``sources`` (never a source itself)."""
    srcs = list(dict.fromkeys(sources))
    pairs: list[tuple[str, Fact]] = []
    for s in srcs:
        facts = kg.facts(object=s, relation=relation) if inverse else kg.facts(subject=s, relation=relation)
        pairs.extend(((f.subject if inverse else f.object), f) for f in facts)
    return AnswerSet.group(ValueKind.ENTITY, ((v, f) for v, f in pairs if v not in srcs))


def when(kg: KGStore, node: WhenQ) -> AnswerSet:
    facts = kg.facts(subject=node.subject, relation=node.relation, object=node.object)
    pairs = []
    for f in facts:
        if f.start is not None:
            t = f.start.coarsen(node.granularity) if node.granularity is not None else f.start
            pairs.append((t.iso(), f))
    return AnswerSet.group(ValueKind.TIME, pairs)


def evaluate(
    kg: KGStore, nodes: Sequence[Node], *, limit: Callable[[int, AnswerSet], bool] | None = None
) -> list[AnswerSet]:
    """The answers of every node, in order (each node may use earlier ones). ``limit(i, answers)`` may stop
    the evaluation early (returns what was computed) when a node's answers are unusable."""
    out: list[AnswerSet] = []
    for i, node in enumerate(nodes):
        match node:
            case Projection():
                src = [node.source] if isinstance(node.source, str) else out[node.source].values()
                res = project(kg, src, node.relation, node.inverse)
            case WhenQ():
                res = when(kg, node)
            case SetOp():
                parts = [out[k] for k in node.inputs]
                res = ops.intersect(parts) if node.op is SetOperation.AND else ops.union(parts)
            case TimeFilter():
                ref = _reference(node, out)
                res = (
                    ops.time_filter(out[node.input], node.relation, ref)
                    if ref is not None
                    else AnswerSet(out[node.input].kind)
                )
            case Pick():
                res = ops.pick(out[node.input], node.which)
            case Compare():
                res = ops.compare(
                    list(zip(node.candidates, (out[k] for k in node.inputs), strict=True)), node.mode
                )
            case _:
                assert_never(node)
        out.append(res)
        if limit is not None and not limit(i, res):
            break
    return out


def _reference(node: TimeFilter, out: Sequence[AnswerSet]) -> TimePoint | Interval | None:
    if isinstance(node.time, int):
        return out[node.time].earliest()
    return Interval(node.time, node.end) if node.end is not None else node.time


# --- instances -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Instance:
    """A grounded pattern: its nodes (the last is the answer), gold answers (entity names or ISO times, as
    stored) and the facts supporting them."""

    pattern: PatternType
    nodes: tuple[Node, ...]
    answers: tuple[str, ...]
    kind: ValueKind
    evidence: tuple[Fact, ...] = ()

    def entities(self) -> set[str]:
        """The entities the question names (anchors, compared candidates), not the answers."""
        out: set[str] = set()
        for n in self.nodes:
            if isinstance(n, Projection) and isinstance(n.source, str):
                out.add(n.source)
            elif isinstance(n, WhenQ):
                out.update((n.subject, n.object))
            elif isinstance(n, Compare):
                out.update(n.candidates)
        return out

    def key(self) -> tuple[Any, ...]:
        return (self.pattern, self.nodes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pattern": str(self.pattern),
            "nodes": [node_to_dict(n) for n in self.nodes],
            "answers": list(self.answers),
            "kind": str(self.kind),
            "evidence": [f.to_dict() for f in self.evidence],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Instance:
        return cls(
            PatternType(data["pattern"]),
            tuple(node_from_dict(n) for n in data["nodes"]),
            tuple(str(a) for a in data["answers"]),
            ValueKind(data.get("kind", "entity")),
            tuple(Fact.from_dict(f) for f in data.get("evidence", [])),
        )


def node_to_dict(node: Node) -> dict[str, Any]:
    match node:
        case Projection():
            return {"node": "hop", "source": node.source, "relation": node.relation, "inverse": node.inverse}
        case WhenQ():
            gran = node.granularity.name.lower() if node.granularity is not None else None
            return {"node": "when", "subject": node.subject, "relation": node.relation,
                    "object": node.object, "granularity": gran}  # fmt: skip
        case SetOp():
            return {"node": "set", "op": str(node.op), "inputs": list(node.inputs)}
        case TimeFilter():
            time = node.time if isinstance(node.time, int) else node.time.iso()
            end = node.end.iso() if node.end is not None else None
            return {
                "node": "time",
                "input": node.input,
                "relation": str(node.relation),
                "time": time,
                "end": end,
            }
        case Pick():
            return {"node": "pick", "input": node.input, "which": str(node.which)}
        case Compare():
            return {"node": "compare", "inputs": list(node.inputs), "candidates": list(node.candidates),
                    "mode": str(node.mode)}  # fmt: skip
        case _:
            assert_never(node)


def node_from_dict(d: dict[str, Any]) -> Node:
    kind = d.get("node")
    try:
        if kind == "hop":
            return Projection(d["source"], str(d["relation"]), bool(d.get("inverse", False)))
        if kind == "when":
            gran = Granularity.parse(d["granularity"]) if d.get("granularity") else None
            return WhenQ(str(d["subject"]), str(d["relation"]), str(d["object"]), gran)
        if kind == "set":
            return SetOp(SetOperation(d["op"]), tuple(int(i) for i in d["inputs"]))
        if kind == "time":
            t = d["time"]
            time = t if isinstance(t, int) else parse_time(str(t))
            end = parse_time(str(d["end"])) if d.get("end") else None
            return TimeFilter(int(d["input"]), TemporalRelation(d["relation"]), time, end)
        if kind == "pick":
            return Pick(int(d["input"]), Extreme(d["which"]))
        if kind == "compare":
            return Compare(tuple(int(i) for i in d["inputs"]), tuple(str(c) for c in d["candidates"]),
                           CompareMode(d["mode"]))  # fmt: skip
    except (KeyError, ValueError, TypeError) as exc:
        raise DataError(f"bad pattern node {d!r}: {exc}") from None
    raise DataError(f"unknown pattern node kind {kind!r} in {d!r}")


# --- as a typed program ---------------------------------------------------------------------------------
def _rows(node: Node) -> Match | None:
    """The rows of a search node that starts from named entities (a fed projection has none)."""
    match node:
        case WhenQ():
            return Match(node.subject, node.relation, node.object)
        case Projection() if isinstance(node.source, str):
            if node.inverse:
                return Match(None, node.relation, node.source)
            return Match(node.source, node.relation, None)
        case _:
            return None


def as_program(inst: Instance) -> Program | None:
    """The instance as the one typed program (:mod:`tkgqa.query.program.nodes`), where its grammar covers
    the pattern: ``1p``, ``t?``, ``in``, ``first``/``last``, ``before``/``after``, ``after_first``/
    ``before_last`` (the :class:`~tkgqa.query.program.executor.Executor` gives the same answer set as
    :func:`evaluate`); ``None`` for chains, set operations, ``between`` and ``compare``."""
    nodes = inst.nodes
    first = _rows(nodes[0])
    if first is None:
        return None
    match inst.pattern, nodes[1:]:
        case PatternType.P1 | PatternType.TIME, ():
            return Times(first, nodes[0].granularity) if isinstance(nodes[0], WhenQ) else Entities(first)
        case PatternType.IN, (TimeFilter(time=TimePoint() as t, end=None),):
            return Entities(Filter(first, TemporalRelation.IN, Const(t)))
        case PatternType.FIRST | PatternType.LAST, (Pick(which=which),):
            picked = Select(first, which)
            return Times(picked) if isinstance(nodes[0], WhenQ) else Entities(picked)
        case PatternType.BEFORE | PatternType.AFTER | PatternType.AFTER_FIRST | PatternType.BEFORE_LAST, (
            Projection() as candidates,
            TimeFilter(relation=relation),
            *rest,
        ):
            rows = _rows(candidates)
            if rows is None:
                return None
            kept = Filter(rows, relation, TimeOf(first))
            return Entities(Select(kept, rest[0].which) if rest and isinstance(rest[0], Pick) else kept)
        case _:
            return None


_T0, _T1 = TimePoint(2000), TimePoint(2001)
_BEFORE, _AFTER = TemporalRelation.BEFORE, TemporalRelation.AFTER
_P = Projection
#: The node structure of each pattern, with placeholder names and times (what a plan of that shape does).
SKELETONS: dict[PatternType, tuple[Node, ...]] = {
    PatternType.P1: (_P("a", "r"),),
    PatternType.P2: (_P("a", "r"), _P(0, "r")),
    PatternType.P3: (_P("a", "r"), _P(0, "r"), _P(1, "r")),
    PatternType.I2: (_P("a", "r"), _P("b", "r"), SetOp(SetOperation.AND, (0, 1))),
    PatternType.I3: (_P("a", "r"), _P("b", "r"), _P("c", "r"), SetOp(SetOperation.AND, (0, 1, 2))),
    PatternType.U2: (_P("a", "r"), _P("b", "r"), SetOp(SetOperation.OR, (0, 1))),
    PatternType.IP: (_P("a", "r"), _P("b", "r"), SetOp(SetOperation.AND, (0, 1)), _P(2, "r")),
    PatternType.PI: (_P("a", "r"), _P(0, "r"), _P("b", "r"), SetOp(SetOperation.AND, (1, 2))),
    PatternType.COMPARE: (
        WhenQ("a", "r", "o"), WhenQ("b", "r", "o"), Compare((0, 1), ("a", "b"), CompareMode.EARLIER),
    ),
    PatternType.TIME: (WhenQ("a", "r", "o"),),
    PatternType.IN: (_P("a", "r"), TimeFilter(0, TemporalRelation.IN, _T0)),
    PatternType.BEFORE: (WhenQ("a", "r", "o"), _P("o", "r", True), TimeFilter(1, _BEFORE, 0)),
    PatternType.AFTER: (WhenQ("a", "r", "o"), _P("o", "r", True), TimeFilter(1, _AFTER, 0)),
    PatternType.FIRST: (_P("a", "r"), Pick(0, Extreme.FIRST)),
    PatternType.LAST: (_P("a", "r"), Pick(0, Extreme.LAST)),
    PatternType.BETWEEN: (_P("a", "r"), TimeFilter(0, TemporalRelation.IN, _T0, _T1)),
    PatternType.AFTER_FIRST: (
        WhenQ("a", "r", "o"), _P("o", "r", True), TimeFilter(1, _AFTER, 0), Pick(2, Extreme.FIRST),
    ),
    PatternType.BEFORE_LAST: (
        WhenQ("a", "r", "o"), _P("o", "r", True), TimeFilter(1, _BEFORE, 0), Pick(2, Extreme.LAST),
    ),
}  # fmt: skip
