"""Grounding KG patterns (:mod:`.patterns`) in a store: the seeded sampler of pattern instances.

:func:`ground` samples instances with a seeded RNG: anchors are random facts, walks follow incident facts,
and an instance is kept when its answer set is non-empty and small (``max_answers``), its intermediate sets
are small (``max_fanout``; temporal candidate sets ``max_candidates``) and it is new (deduplicated).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, assert_never

from pydantic import BaseModel, ConfigDict, Field

from ...errors import DataError
from ...kg.base import KGStore
from ...kg.fact import Fact
from ...time import Extreme, Granularity, TemporalRelation, TimePoint
from ..program.answer_sets import AnswerSet, CompareMode
from ..program.executor import Executor
from ..program.nodes import SetOperation
from . import patterns
from .patterns import Instance, PatternNode, PatternType, Pick, Projection, SetOp, TimeFilter, WhenQ


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


@dataclass(frozen=True)
class _Walk:
    """The start of every candidate: fact ``fact`` read backwards (``inverse``: its subject is the answer)
    or forwards; ``first`` is that projection, ``x`` one of its answers."""

    fact: Fact
    inverse: bool

    @property
    def first(self) -> Projection:
        f = self.fact
        return (
            Projection(f.object, f.relation, True)
            if self.inverse
            else Projection(f.subject, f.relation, False)
        )

    @property
    def x(self) -> str:
        return self.fact.subject if self.inverse else self.fact.object


class Grounder:
    """Samples pattern instances from one store (see :func:`ground`)."""

    def __init__(self, kg: KGStore, config: GroundingConfig | None = None) -> None:
        self.kg = kg
        self.config = config or GroundingConfig()
        self.rng = random.Random(self.config.seed)
        # what a walk asks again and again, computed once: whether a name is labelled, and an entity's usable
        # incident facts (a hub of MultiTQ has tens of thousands; grounding 300 per pattern read them 8
        # million times, 7 minutes of label lookups)
        self._named_cache: dict[str, bool] = {}
        self._incident_cache: dict[str, list[Fact]] = {}
        self.facts = [f for f in kg if self._usable(f)]
        if not self.facts:
            raise DataError(f"KG {kg.name!r} has no facts usable for grounding (labelled, subject != object)")

    def _named(self, name: str) -> bool:
        named = self._named_cache.get(name)
        if named is None:
            named = self._named_cache[name] = not self.config.labelled_only or not _ID.fullmatch(
                self.kg.label(name)
            )
        return named

    def _usable(self, f: Fact) -> bool:
        return f.subject != f.object and all(self._named(n) for n in (f.subject, f.relation, f.object))

    def _fact(self) -> Fact:
        return self.rng.choice(self.facts)

    def _usable_incident(self, entity: str) -> list[Fact]:
        """The usable facts incident to ``entity``, in the store's order (computed once; do not change)."""
        facts = self._incident_cache.get(entity)
        if facts is None:
            facts = self._incident_cache[entity] = [f for f in self.kg.incident(entity) if self._usable(f)]
        return facts

    def _incident(self, entity: str, avoid: Fact | None = None) -> Fact | None:
        facts = [f for f in self._usable_incident(entity) if f != avoid]
        return self.rng.choice(facts) if facts else None

    @staticmethod
    def _other(f: Fact, entity: str) -> str:
        return f.object if f.subject == entity else f.subject

    @staticmethod
    def _to(f: Fact, target: str, source: str | int | None = None) -> Projection:
        """The hop along ``f`` that reaches ``target`` (from the other end, or from node ``source``)."""
        other = f.object if f.subject == target else f.subject
        return Projection(other if source is None else source, f.relation, inverse=f.subject == target)

    def _time(self, f: Fact) -> TimePoint | None:
        if f.start is None:
            return None
        return f.start.coarsen(Granularity.MONTH) if f.start.granularity is Granularity.DAY else f.start

    # one builder per pattern family: nodes (last = answer) or None
    def build(self, pattern: PatternType) -> tuple[PatternNode, ...] | None:
        """A candidate instance of ``pattern`` (unchecked): a random fact ``f`` read in a random direction
        is the first projection, then the pattern's own walk from its answer."""
        f = self._fact()
        inv = self.rng.random() < 0.5
        w = _Walk(f, inv)
        match pattern:
            case PatternType.P1:
                return (w.first,)
            case PatternType.P2 | PatternType.P3:
                return self._chain(pattern, w)
            case PatternType.I2 | PatternType.I3 | PatternType.IP:
                return self._intersection(pattern, w)
            case PatternType.PI:
                return self._projection_intersection(w)
            case PatternType.U2:
                return self._union(w)
            case PatternType.COMPARE:
                return self._compare(w)
            case PatternType.TIME:
                grans = [None, Granularity.YEAR] + ([Granularity.MONTH] if f.start and f.start.day else [])
                return (WhenQ(f.subject, f.relation, f.object, self.rng.choice(grans)),)
            case PatternType.IN | PatternType.BETWEEN:
                return self._in_time(pattern, w)
            case PatternType.FIRST | PatternType.LAST:
                which = Extreme.FIRST if pattern is PatternType.FIRST else Extreme.LAST
                if self.rng.random() < 0.25:
                    return (WhenQ(f.subject, f.relation, f.object), Pick(0, which))
                return (w.first, Pick(0, which))
            case PatternType.BEFORE | PatternType.AFTER | PatternType.AFTER_FIRST | PatternType.BEFORE_LAST:
                return self._anchored(pattern, w)
            case _:
                assert_never(pattern)

    def _chain(self, pattern: PatternType, w: _Walk) -> tuple[PatternNode, ...] | None:
        x = w.x
        g = self._incident(x, w.fact)
        if g is None:
            return None
        nodes: tuple[PatternNode, ...] = (w.first, Projection(0, g.relation, inverse=g.object == x))
        if pattern is PatternType.P3:
            y = self._other(g, x)
            h = self._incident(y, g)
            if h is None:
                return None
            nodes += (Projection(1, h.relation, inverse=h.object == y),)
        return nodes

    def _intersection(self, pattern: PatternType, w: _Walk) -> tuple[PatternNode, ...] | None:
        x = w.x
        n = 3 if pattern is PatternType.I3 else 2
        facts = self._distinct_incident(x, n)
        if facts is None:
            return None
        joined = SetOp(SetOperation.AND, tuple(range(n)))
        nodes: tuple[PatternNode, ...] = (*(self._to(g, x) for g in facts), joined)
        if pattern is PatternType.IP:
            h = self._incident(x, facts[0])
            if h is None or h in facts:
                return None
            nodes += (Projection(n, h.relation, inverse=h.object == x),)
        return nodes

    def _projection_intersection(self, w: _Walk) -> tuple[PatternNode, ...] | None:
        x = w.x
        facts = self._distinct_incident(x, 2)
        if facts is None:
            return None
        g1, g2 = facts
        mid = self._other(g1, x)
        f0 = self._incident(mid, g1)
        if f0 is None or x in (f0.subject, f0.object):
            return None
        return (self._to(f0, mid), self._to(g1, x, 0), self._to(g2, x), SetOp(SetOperation.AND, (1, 2)))

    def _union(self, w: _Walk) -> tuple[PatternNode, ...] | None:
        f, inv = w.fact, w.inverse
        g = self.rng.choice(self.kg.facts(relation=f.relation))
        if (g.object if inv else g.subject) == w.first.source or not self._usable(g):
            return None
        second = Projection(g.object, g.relation, True) if inv else Projection(g.subject, g.relation, False)
        return (w.first, second, SetOp(SetOperation.OR, (0, 1)))

    def _compare(self, w: _Walk) -> tuple[PatternNode, ...] | None:
        f = w.fact
        others = [g for g in self.kg.facts(relation=f.relation, object=f.object) if g.subject != f.subject]
        if not others:
            return None
        b = self.rng.choice(others).subject
        mode = self.rng.choice([CompareMode.EARLIER, CompareMode.LATER])
        a_q, b_q = WhenQ(f.subject, f.relation, f.object), WhenQ(b, f.relation, f.object)
        return (a_q, b_q, patterns.Compare((0, 1), (f.subject, b), mode))

    def _in_time(self, pattern: PatternType, w: _Walk) -> tuple[PatternNode, ...] | None:
        t = self._time(w.fact)
        if t is None:
            return None
        if pattern is PatternType.IN:
            return (w.first, TimeFilter(0, TemporalRelation.IN, t))
        end = _shift(t, self.rng.randint(1, 3))
        return (w.first, TimeFilter(0, TemporalRelation.IN, t, end))

    def _anchored(self, pattern: PatternType, w: _Walk) -> tuple[PatternNode, ...] | None:
        """Before/after an anchor event: another fact of the same relation and fixed entity."""
        f, inv = w.fact, w.inverse
        fixed = f.object if inv else f.subject
        peers = (
            self.kg.facts(relation=f.relation, object=fixed)
            if inv
            else self.kg.facts(subject=fixed, relation=f.relation)
        )
        peers = [g for g in peers if g != f and self._usable(g)]
        if not peers:
            return None
        a = self.rng.choice(peers)
        anchor = WhenQ(a.subject, a.relation, a.object)
        before = pattern in (PatternType.BEFORE, PatternType.BEFORE_LAST)
        rel = TemporalRelation.BEFORE if before else TemporalRelation.AFTER
        nodes: tuple[PatternNode, ...] = (anchor, w.first, TimeFilter(1, rel, 0))
        if pattern is PatternType.AFTER_FIRST:
            nodes += (Pick(2, Extreme.FIRST),)
        elif pattern is PatternType.BEFORE_LAST:
            nodes += (Pick(2, Extreme.LAST),)
        return nodes

    def _distinct_incident(self, x: str, n: int) -> list[Fact] | None:
        facts = list(self._usable_incident(x))
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

    def check(self, pattern: PatternType, nodes: tuple[PatternNode, ...]) -> Instance | None:
        """Evaluate ``nodes``; the instance when every set is usable and the answer set small."""
        cfg = self.config

        def usable(i: int, answers: AnswerSet) -> bool:
            if not answers:
                return False
            feeds_hop = any(isinstance(n, Projection) and n.source == i for n in nodes[i + 1 :])
            feeds_time = any(isinstance(n, TimeFilter | Pick) and n.input == i for n in nodes[i + 1 :])
            if feeds_hop:
                return len(answers) <= cfg.max_fanout
            if feeds_time:
                return len(answers) <= cfg.max_candidates and (
                    len(answers) >= 2 or isinstance(nodes[i], WhenQ)
                )
            return True

        executor = Executor(self.kg)
        sets: list[AnswerSet] = []
        for i, program in enumerate(patterns.programs(nodes)):  # each step's answers, on the one executor
            sets.append(executor.answer_set(program))
            if not usable(i, sets[i]):
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
            if isinstance(node, patterns.Compare) and len(final) != 1:
                return None
            if isinstance(node, TimeFilter) and isinstance(node.time, int):
                anchor, cands = nodes[node.time], nodes[node.input]
                if isinstance(anchor, WhenQ) and isinstance(cands, Projection):
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
