"""KG patterns grounded into question instances: the structural side of KG-derived question generation.

A *pattern* is the abstract shape of a complex question (LPKG, Wang et al. 2024, Figure 3, after BetaE's
query structures): ``1p``/``2p``/``3p`` chains of projections, ``2i``/``3i`` intersections, ``2u`` union,
``ip``/``pi`` intersection-projection mixes and ``compare``; plus the temporal patterns a TKG needs: ``t?``
(when did it happen), ``in`` (at a given time), ``before``/``after`` an anchor event, ``first``/``last``,
``between`` two times, and the composed ``after_first``/``before_last`` (MultiTQ's "Multiple" questions).

An :class:`Instance` is a pattern grounded in a store: a tiny DAG of typed nodes (:data:`Node`) whose
last node is the answer, with the gold answers computed by :func:`evaluate` — KG operations only, no
question text (verbalising an instance is the consumer's job). Answers are :class:`AnswerSet` values (each
answer keeps the facts supporting it, so temporal nodes can test the times); the set and temporal
operations on them (:func:`intersect`, :func:`union`, :func:`time_filter`, :func:`pick`, :func:`compare`)
use the one time semantics (:func:`~tkgqa.time.holds`, :func:`~tkgqa.time.extreme`).

:func:`ground` samples instances with a seeded RNG: anchors are random facts, walks follow incident facts,
and an instance is kept when its answer set is non-empty and small (``max_answers``), its intermediate sets
are small (``max_fanout``; temporal candidate sets ``max_candidates``) and it is new (deduplicated).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, assert_never

from pydantic import BaseModel, ConfigDict, Field

from ...errors import DataError
from ...kg.base import KGStore
from ...kg.fact import Fact
from ...time import Extreme, Granularity, Interval, TemporalRelation, TimePoint, parse_time
from ..program.answer_sets import (
    AnswerSet,
    CompareMode,
    ValueKind,
    compare,
    intersect,
    pick,
    time_filter,
    union,
)
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
class Hop:
    """Projection: from ``source`` (an entity, or the entities of node ``source``) along ``relation``;
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


Node = Hop | WhenQ | SetOp | TimeFilter | Pick | Compare


# --- evaluation ------------------------------------------------------------------------------------------
def hop(kg: KGStore, sources: Iterable[str], relation: str, inverse: bool) -> AnswerSet:
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
            case Hop():
                src = [node.source] if isinstance(node.source, str) else out[node.source].values()
                res = hop(kg, src, node.relation, node.inverse)
            case WhenQ():
                res = when(kg, node)
            case SetOp():
                parts = [out[k] for k in node.inputs]
                res = intersect(parts) if node.op is SetOperation.AND else union(parts)
            case TimeFilter():
                ref = _reference(node, out)
                res = (
                    time_filter(out[node.input], node.relation, ref)
                    if ref is not None
                    else AnswerSet(out[node.input].kind)
                )
            case Pick():
                res = pick(out[node.input], node.which)
            case Compare():
                res = compare(
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
            if isinstance(n, Hop) and isinstance(n.source, str):
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
        case Hop():
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
            return Hop(d["source"], str(d["relation"]), bool(d.get("inverse", False)))
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


# --- grounding -------------------------------------------------------------------------------------------
class GroundingConfig(BaseModel):
    """How :func:`ground` samples instances."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    patterns: tuple[PatternType, ...] = tuple(PatternType)
    per_pattern: int = Field(default=100, ge=0)
    max_answers: int = Field(default=10, ge=1)
    max_fanout: int = Field(default=10, ge=1)
    max_candidates: int = Field(default=500, ge=2)
    attempts: int = Field(default=80, ge=1, description="tries per wanted instance")
    labelled_only: bool = True
    seed: int = 0


@dataclass(frozen=True)
class GroundingResult:
    instances: list[Instance]
    counts: dict[str, int]
    attempts: dict[str, int]


_ID = re.compile(r"[QP]\d+")


class Grounder:
    """Samples pattern instances from one store (see :func:`ground`)."""

    def __init__(self, kg: KGStore, config: GroundingConfig | None = None) -> None:
        self.kg = kg
        self.config = config or GroundingConfig()
        self.rng = random.Random(self.config.seed)
        self.facts = [f for f in kg if self._usable(f)]
        if not self.facts:
            raise DataError(f"KG {kg.name!r} has no facts usable for grounding (labelled, subject != object)")

    def _named(self, name: str) -> bool:
        return not self.config.labelled_only or not _ID.fullmatch(self.kg.label(name))

    def _usable(self, f: Fact) -> bool:
        return f.subject != f.object and all(self._named(n) for n in (f.subject, f.relation, f.object))

    def _fact(self) -> Fact:
        return self.rng.choice(self.facts)

    def _incident(self, entity: str, avoid: Fact | None = None) -> Fact | None:
        facts = [f for f in self.kg.incident(entity) if f != avoid and self._usable(f)]
        return self.rng.choice(facts) if facts else None

    @staticmethod
    def _other(f: Fact, entity: str) -> str:
        return f.object if f.subject == entity else f.subject

    @staticmethod
    def _to(f: Fact, target: str, source: str | int | None = None) -> Hop:
        """The hop along ``f`` that reaches ``target`` (from the other end, or from node ``source``)."""
        other = f.object if f.subject == target else f.subject
        return Hop(other if source is None else source, f.relation, inverse=f.subject == target)

    def _time(self, f: Fact) -> TimePoint | None:
        if f.start is None:
            return None
        return f.start.coarsen(Granularity.MONTH) if f.start.granularity is Granularity.DAY else f.start

    # one builder per pattern: nodes (last = answer) or None
    def build(self, pattern: PatternType) -> tuple[Node, ...] | None:
        rng = self.rng
        f = self._fact()
        inv = rng.random() < 0.5
        first = Hop(f.object, f.relation, True) if inv else Hop(f.subject, f.relation, False)
        x = f.subject if inv else f.object  # an answer of ``first``
        match pattern:
            case PatternType.P1:
                return (first,)
            case PatternType.P2 | PatternType.P3:
                g = self._incident(x, f)
                if g is None:
                    return None
                nodes: tuple[Node, ...] = (first, Hop(0, g.relation, inverse=g.object == x))
                if pattern is PatternType.P3:
                    y = self._other(g, x)
                    h = self._incident(y, g)
                    if h is None:
                        return None
                    nodes += (Hop(1, h.relation, inverse=h.object == y),)
                return nodes
            case PatternType.I2 | PatternType.I3 | PatternType.IP:
                n = 3 if pattern is PatternType.I3 else 2
                facts = self._distinct_incident(x, n)
                if facts is None:
                    return None
                nodes = (*(self._to(g, x) for g in facts), SetOp(SetOperation.AND, tuple(range(n))))
                if pattern is PatternType.IP:
                    h = self._incident(x, facts[0])
                    if h is None or h in facts:
                        return None
                    nodes += (Hop(n, h.relation, inverse=h.object == x),)
                return nodes
            case PatternType.PI:
                facts = self._distinct_incident(x, 2)
                if facts is None:
                    return None
                g1, g2 = facts
                mid = self._other(g1, x)
                f0 = self._incident(mid, g1)
                if f0 is None or x in (f0.subject, f0.object):
                    return None
                return (
                    self._to(f0, mid),
                    self._to(g1, x, 0),
                    self._to(g2, x),
                    SetOp(SetOperation.AND, (1, 2)),
                )
            case PatternType.U2:
                same = self.kg.facts(relation=f.relation)
                g = rng.choice(same)
                if (g.object if inv else g.subject) == first.source or not self._usable(g):
                    return None
                second = Hop(g.object, g.relation, True) if inv else Hop(g.subject, g.relation, False)
                return (first, second, SetOp(SetOperation.OR, (0, 1)))
            case PatternType.COMPARE:
                others = [
                    g for g in self.kg.facts(relation=f.relation, object=f.object) if g.subject != f.subject
                ]
                if not others:
                    return None
                b = rng.choice(others).subject
                mode = rng.choice([CompareMode.EARLIER, CompareMode.LATER])
                a_q, b_q = WhenQ(f.subject, f.relation, f.object), WhenQ(b, f.relation, f.object)
                return (a_q, b_q, Compare((0, 1), (f.subject, b), mode))
            case PatternType.TIME:
                grans = [None, Granularity.YEAR] + ([Granularity.MONTH] if f.start and f.start.day else [])
                return (WhenQ(f.subject, f.relation, f.object, rng.choice(grans)),)
            case PatternType.IN | PatternType.BETWEEN:
                t = self._time(f)
                if t is None:
                    return None
                if pattern is PatternType.IN:
                    return (first, TimeFilter(0, TemporalRelation.IN, t))
                end = _shift(t, rng.randint(1, 3))
                return (first, TimeFilter(0, TemporalRelation.IN, t, end))
            case PatternType.FIRST | PatternType.LAST:
                which = Extreme.FIRST if pattern is PatternType.FIRST else Extreme.LAST
                if rng.random() < 0.25:
                    return (WhenQ(f.subject, f.relation, f.object), Pick(0, which))
                return (first, Pick(0, which))
            case PatternType.BEFORE | PatternType.AFTER | PatternType.AFTER_FIRST | PatternType.BEFORE_LAST:
                # the anchor event is another fact of the same relation and fixed entity
                fixed = f.object if inv else f.subject
                peers = (
                    self.kg.facts(relation=f.relation, object=fixed)
                    if inv
                    else self.kg.facts(subject=fixed, relation=f.relation)
                )
                peers = [g for g in peers if g != f and self._usable(g)]
                if not peers:
                    return None
                a = rng.choice(peers)
                anchor = WhenQ(a.subject, a.relation, a.object)
                rel = (
                    TemporalRelation.BEFORE
                    if pattern in (PatternType.BEFORE, PatternType.BEFORE_LAST)
                    else TemporalRelation.AFTER
                )
                nodes = (anchor, first, TimeFilter(1, rel, 0))
                if pattern is PatternType.AFTER_FIRST:
                    nodes += (Pick(2, Extreme.FIRST),)
                elif pattern is PatternType.BEFORE_LAST:
                    nodes += (Pick(2, Extreme.LAST),)
                return nodes
            case _:
                assert_never(pattern)

    def _distinct_incident(self, x: str, n: int) -> list[Fact] | None:
        facts = [g for g in self.kg.incident(x) if self._usable(g)]
        self.rng.shuffle(facts)
        out: list[Fact] = []
        seen: set[tuple[str, str]] = set()
        for g in facts:
            key = (self._other(g, x), g.relation)
            if key not in seen:
                seen.add(key)
                out.append(g)
                if len(out) == n:
                    return out
        return None

    def check(self, pattern: PatternType, nodes: tuple[Node, ...]) -> Instance | None:
        """Evaluate ``nodes``; the instance when every set is usable and the answer set small."""
        cfg = self.config

        def usable(i: int, answers: AnswerSet) -> bool:
            if not answers:
                return False
            feeds_hop = any(isinstance(n, Hop) and n.source == i for n in nodes[i + 1 :])
            feeds_time = any(isinstance(n, TimeFilter | Pick) and n.input == i for n in nodes[i + 1 :])
            if feeds_hop:
                return len(answers) <= cfg.max_fanout
            if feeds_time:
                return len(answers) <= cfg.max_candidates and (
                    len(answers) >= 2 or isinstance(nodes[i], WhenQ)
                )
            return True

        sets = evaluate(self.kg, nodes, limit=usable)
        if len(sets) != len(nodes):
            return None
        final = sets[-1]
        if not 1 <= len(final) <= cfg.max_answers:
            return None
        for node in nodes:
            if isinstance(node, Pick) and len(sets[node.input]) < 2:
                return None  # "the first" of one candidate is no question
            if (
                isinstance(node, SetOp)
                and node.op is SetOperation.AND
                and all(len(sets[k]) == len(final) for k in node.inputs)
            ):
                return None  # every branch gives the same answers: the intersection adds nothing
            if isinstance(node, Compare) and len(final) != 1:
                return None
            if isinstance(node, TimeFilter) and isinstance(node.time, int):
                anchor, cands = nodes[node.time], nodes[node.input]
                if isinstance(anchor, WhenQ) and isinstance(cands, Hop):
                    named = {anchor.subject, anchor.object} - {cands.source}
                    if named & set(final.values()):
                        return None  # "who visited X after Y did?" answered by Y itself
        return Instance(pattern, nodes, tuple(final.values()), final.kind, tuple(final.facts()[:20]))

    def ground(self, pattern: PatternType, n: int) -> tuple[list[Instance], int]:
        out: list[Instance] = []
        seen: set[tuple[Any, ...]] = set()
        tries = 0
        budget = n * self.config.attempts
        while len(out) < n and tries < budget:
            tries += 1
            nodes = self.build(pattern)
            if nodes is None:
                continue
            inst = self.check(pattern, nodes)
            if inst is None or inst.key() in seen:
                continue
            seen.add(inst.key())
            out.append(inst)
        return out, tries


def ground(kg: KGStore, config: GroundingConfig | None = None) -> GroundingResult:
    """Instances of every configured pattern (``per_pattern`` each at most), seeded; counts per pattern."""
    grounder = Grounder(kg, config)
    cfg = grounder.config
    instances: list[Instance] = []
    counts: dict[str, int] = {}
    attempts: dict[str, int] = {}
    for pattern in cfg.patterns:
        found, tries = grounder.ground(pattern, cfg.per_pattern)
        instances.extend(found)
        counts[str(pattern)] = len(found)
        attempts[str(pattern)] = tries
    return GroundingResult(instances, counts, attempts)


def _shift(t: TimePoint, k: int) -> TimePoint:
    """``t`` moved ``k`` steps of its own granularity (months or years; a day moves by months)."""
    if t.month is None:
        return TimePoint(t.year + k)
    months = t.year * 12 + t.month - 1 + k
    return TimePoint(months // 12, months % 12 + 1)
