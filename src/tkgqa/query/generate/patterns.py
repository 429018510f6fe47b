"""KG patterns: the shapes of complex questions and their grounded instances.

A *pattern* is the abstract shape of a complex question (LPKG, Wang et al. 2024, Figure 3, after BetaE's
query structures): ``1p``/``2p``/``3p`` chains of projections, ``2i``/``3i`` intersections, ``2u`` union,
``ip``/``pi`` intersection-projection mixes and ``compare``; plus the temporal patterns a TKG needs: ``t?``
(when did it happen), ``in`` (at a given time), ``before``/``after`` an anchor event, ``first``/``last``,
``between`` two times, and the composed ``after_first``/``before_last`` (MultiTQ's "Multiple" questions).

An :class:`Instance` is a pattern grounded in a store (sampled by :mod:`.grounding`): its steps, a tiny DAG
(:data:`PatternNode`: :class:`Projection`, :class:`WhenQ`, :class:`SetOp`, :class:`TimeFilter`, :class:`Pick`,
:class:`Compare`) whose last step is the answer — one step per sub-question of the plan LPKG verbalises — and
its gold answers. The steps only describe; every step is built as a program of the one typed program
(:func:`programs`: ``match``, ``hop``, ``and``/``or``, ``compare``, time filters, ``first``/``last`` of
:mod:`tkgqa.query.program.nodes`) and computed by its executor (each answer keeps the facts supporting
it; the one time semantics). No question text: verbalising an instance is :mod:`.verbalize`'s job. Steps
serialise as JSON objects (:func:`node_to_dict`; a projection's kind is ``hop``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, assert_never

from ...errors import DataError
from ...kg.fact import Fact
from ...time import Extreme, Granularity, TemporalRelation, TimePoint, parse_time
from ..program import nodes as pn
from ..program.answer_sets import CompareMode, ValueKind
from ..program.nodes import Program, SetOperation
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


PatternNode = Projection | WhenQ | SetOp | TimeFilter | Pick | Compare


# --- instances -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Instance:
    """A grounded pattern: its nodes (the last is the answer), gold answers (entity names or ISO times, as
    stored) and the facts supporting them."""

    pattern: PatternType
    nodes: tuple[PatternNode, ...]
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

    def program(self) -> Program:
        """The whole pattern as one typed program (its last step's: :func:`programs`)."""
        return programs(self.nodes)[-1]

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


def node_to_dict(node: PatternNode) -> dict[str, Any]:
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


def node_from_dict(d: dict[str, Any]) -> PatternNode:
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


# --- as typed programs ------------------------------------------------------------------------------------
def programs(nodes: Sequence[PatternNode]) -> list[Program]:
    """The typed program (:mod:`tkgqa.query.program.nodes`) of every step: step ``k``'s program answers
    step ``k`` and holds the programs of the steps it reads, so the last one is the whole pattern. Every
    pattern's answers are computed by running these on the one executor
    (:meth:`~tkgqa.query.program.executor.Executor.answer_set`)."""
    out: list[Program] = []
    for node in nodes:
        out.append(_program(node, out))
    return out


def _program(node: PatternNode, done: Sequence[Program]) -> Program:
    match node:
        case Projection():
            source = node.source
            if isinstance(source, int):
                return pn.Entities(pn.Hop(done[source].rows, node.relation, node.inverse))
            rows = (
                pn.Match(None, node.relation, source)
                if node.inverse
                else pn.Match(source, node.relation, None)
            )
            return pn.Entities(pn.Exclude(rows, (source,)))  # never the source itself
        case WhenQ():
            return pn.Times(pn.Match(node.subject, node.relation, node.object), node.granularity)
        case SetOp():
            return pn.Entities(pn.Combine(node.op, tuple(done[k].rows for k in node.inputs)))
        case TimeFilter():
            if isinstance(node.time, int):
                ref = done[node.time]
                gran = ref.granularity if isinstance(ref, pn.Times) else None
                time: pn.TimeExpr = pn.TimeOf(ref.rows, pn.ReferenceTime.FIRST, gran)  # its earliest time
            else:
                time = pn.Const(node.time, node.end)
            return _answering(done[node.input], pn.Filter(done[node.input].rows, node.relation, time))
        case Pick():
            return _answering(done[node.input], pn.Select(done[node.input].rows, node.which))
        case Compare():
            named = tuple(zip(node.candidates, (done[k].rows for k in node.inputs), strict=True))
            return pn.Entities(pn.Compare(named, node.mode))
        case _:
            assert_never(node)


def _answering(like: Program, rows: pn.Rows) -> Program:
    """``rows`` answered as ``like`` answers (entities, or times at its granularity)."""
    if isinstance(like, pn.Times):
        return pn.Times(rows, like.granularity, like.use_end, like.order)
    return pn.Entities(rows, like.order)


_T0, _T1 = TimePoint(2000), TimePoint(2001)
_BEFORE, _AFTER = TemporalRelation.BEFORE, TemporalRelation.AFTER
_P = Projection
#: The node structure of each pattern, with placeholder names and times (what a plan of that shape does).
SKELETONS: dict[PatternType, tuple[PatternNode, ...]] = {
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
