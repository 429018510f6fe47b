"""The nodes of a grounded KG pattern (:mod:`.patterns`) and their evaluation: a tiny DAG whose last node is
the answer. :class:`Projection` (one relation step from an entity or an earlier node), :class:`WhenQ` (the
times of one event), :class:`SetOp` (and/or), :class:`TimeFilter`, :class:`Pick` (first/last) and
:class:`Compare`; :func:`evaluate` computes every node's :class:`~tkgqa.query.program.answer_sets.AnswerSet`
with the answer-set operations of :mod:`tkgqa.query.program.answer_sets` (the one time semantics).
Serialised as JSON objects by :func:`node_to_dict`/:func:`node_from_dict` (a projection's kind is ``hop``).
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
