"""Runs a :mod:`.program` over any :class:`~tkgqa.kg.KGStore`.

Rows are facts with the answer variable's binding. Time filters compare a fact's *start* with the reference
(``before``: it starts before the reference begins; ``after``: it starts after the reference ends; ``in``:
it shares a day with it), at each side's own granularity. A filter right on top of a match is pushed into
the store's time index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...kg.base import KGStore
from ...kg.fact import Fact
from ...time import Granularity, Interval, TimePoint, span_of
from ...time.interval import NEG_INF, POS_INF
from .program import (
    Const,
    Entities,
    Exclude,
    Fallback,
    Filter,
    Match,
    Program,
    Rows,
    Select,
    TimeExpr,
    TimeOf,
)


@dataclass(frozen=True, slots=True)
class Row:
    fact: Fact
    value: str | None


@dataclass(frozen=True)
class Result:
    answers: list[str]
    evidence: list[Fact]
    steps: list[dict[str, Any]] = field(default_factory=list)


_MAX_EVIDENCE = 50


class Executor:
    """Evaluates programs against one KG; records one trace step per node."""

    def __init__(
        self, kg: KGStore, *, max_evidence: int = _MAX_EVIDENCE, priority: dict[Fact, int] | None = None
    ) -> None:
        self.kg = kg
        self.priority = priority or {}
        self.max_evidence = max_evidence
        self.steps: list[dict[str, Any]] = []
        self.reference_facts: list[Fact] = []
        self._times: dict[int, tuple[TimeOf, Interval | TimePoint | None]] = {}  # per run, by id

    # --- answers --------------------------------------------------------------------------------
    def run(self, program: Program) -> Result:
        self.steps = []
        self.reference_facts = []
        self._times = {}
        rows = self.rows(program.rows)
        if isinstance(program, Entities):
            answers, used = self._rank_entities(rows, program.order)
        else:
            answers, used = self._rank_times(rows, program.granularity, program.use_end)
        evidence = used[: self.max_evidence]
        for f in self.reference_facts:
            if f not in evidence:
                evidence.append(f)
        return Result(answers, evidence, self.steps)

    def _rank_entities(self, rows: list[Row], order: str) -> tuple[list[str], list[Fact]]:
        counts: Counter[str] = Counter()
        first_seen: dict[str, int] = {}
        latest: dict[str, int] = {}
        earliest: dict[str, int] = {}
        for k, row in enumerate(rows):
            if row.value is None:
                continue
            counts[row.value] += 1
            rank = self.priority.get(row.fact, len(self.priority) + k)
            first_seen[row.value] = min(first_seen.get(row.value, rank), rank)
            day = row.fact.start.first_day if row.fact.start else NEG_INF
            latest[row.value] = max(latest.get(row.value, NEG_INF), day)
            earliest[row.value] = min(earliest.get(row.value, POS_INF), day)
        if order == "recent":
            ranked = sorted(counts, key=lambda v: (-latest[v], -counts[v], first_seen[v]))
        elif order == "earliest":
            ranked = sorted(counts, key=lambda v: (earliest[v], -counts[v], first_seen[v]))
        else:
            ranked = sorted(counts, key=lambda v: (-counts[v], first_seen[v]))
        labels = [self.kg.label(v) for v in ranked]
        top = set(ranked[:3])
        used = [r.fact for r in rows if r.value in top]
        return labels, used

    def _rank_times(
        self, rows: list[Row], granularity: Granularity | None, use_end: bool
    ) -> tuple[list[str], list[Fact]]:
        counts: Counter[TimePoint] = Counter()
        best: dict[TimePoint, int] = {}
        for k, row in enumerate(rows):
            t = row.fact.end if use_end else row.fact.start
            if t is None:
                continue
            t = t.coarsen(granularity) if granularity else t
            counts[t] += 1
            rank = self.priority.get(row.fact, len(self.priority) + k)
            best[t] = min(best.get(t, rank), rank)
        if self.priority:
            ranked = sorted(counts, key=lambda t: (best[t], -counts[t], t.first_day))
        else:
            ranked = sorted(counts, key=lambda t: (-counts[t], t.first_day))
        return [t.iso() for t in ranked], [r.fact for r in rows]

    # --- rows -----------------------------------------------------------------------------------
    def rows(self, node: Rows) -> list[Row]:
        if isinstance(node, Match):
            out = self._match(node, None)
        elif isinstance(node, Filter):
            ref = self.time(node.time)
            if ref is None:
                out = []
            else:
                base = self._match(node.rows, _window(node.op, ref)) if isinstance(node.rows, Match) else None
                out = _filter(base if base is not None else self.rows(node.rows), node.op, ref)
        elif isinstance(node, Select):
            out = _select(self.rows(node.rows), node.which, node.n)
        elif isinstance(node, Exclude):
            drop = set(node.entities)
            out = [r for r in self.rows(node.rows) if r.value not in drop]
        elif isinstance(node, Fallback):
            out = self.rows(node.primary)
            if not out:
                out = self.rows(node.alternative)
        else:  # pragma: no cover - the union is closed
            raise TypeError(f"not a rows node: {node!r}")
        self.steps.append({"op": type(node).__name__.lower(), "facts": len(out)})
        return out

    def time(self, expr: TimeExpr) -> Interval | TimePoint | None:
        if isinstance(expr, Const):
            return expr.point
        cached = self._times.get(id(expr))  # alternatives of one program share their reference event
        if cached is not None and cached[0] is expr:
            return cached[1]
        value = self._time_of(expr)
        self._times[id(expr)] = (expr, value)
        return value

    def _time_of(self, expr: TimeOf) -> Interval | TimePoint | None:
        rows = [r for r in self.rows(expr.rows) if r.fact.start is not None]
        if not rows:
            return None
        pick = _select(rows, "last" if expr.which == "last" else "first", 1)
        fact = pick[0].fact
        self.reference_facts.append(fact)
        point = fact.start
        assert point is not None
        if expr.which == "span":
            span = Interval(point, fact.end if fact.end is None or fact.end >= point else point)
            self.steps.append({"op": "time", "value": str(span)})
            return span
        self.steps.append({"op": "time", "value": point.iso()})
        return point.coarsen(expr.granularity) if expr.granularity else point

    def _match(self, m: Match, window: Interval | None) -> list[Row]:
        kg = self.kg
        out: list[Row] = []
        s, o = m.subject, m.object
        relations: list[tuple[str | None, bool]] = [(m.relation, False)]
        if m.inverse:
            relations.append((m.inverse, True))
        if m.both_directions:
            relations.append((m.relation, True))
        seen: set[Fact] = set()
        dedupe = len(relations) > 1
        for rel, swapped in relations:
            qs, qo = (o, s) if swapped else (s, o)
            for f in kg.facts(subject=qs, relation=rel, object=qo, time=window):
                if dedupe:
                    if f in seen:
                        continue
                    seen.add(f)
                fs, fo = (f.object, f.subject) if swapped else (f.subject, f.object)
                if s is None and o is None:
                    value: str | None = fs
                elif s is None:
                    value = fs
                elif o is None:
                    value = fo
                else:
                    value = None
                out.append(Row(f, value))
        if len(relations) > 1:
            out.sort(key=lambda r: r.fact.start.first_day if r.fact.start else NEG_INF)
        return out


def _window(op: str, ref: Interval | TimePoint) -> Interval | None:
    """A time window containing every fact the filter can keep (for the store's time index)."""
    lo, hi = span_of(ref)
    if op == "in":
        return Interval(TimePoint.from_ordinal(lo), TimePoint.from_ordinal(hi))
    if op == "before" and lo > NEG_INF:
        return Interval(None, TimePoint.from_ordinal(lo - 1))
    return None


def _filter(rows: Iterable[Row], op: str, ref: Interval | TimePoint) -> list[Row]:
    lo, hi = span_of(ref)
    out = []
    for r in rows:
        start, end = r.fact.start, r.fact.end
        if op == "ends":
            ok = end is not None and end.first_day <= hi and end.last_day >= lo
        elif start is None:
            ok = False
        elif op == "in":
            end_day = end.last_day if end else POS_INF
            ok = start.first_day <= hi and end_day >= lo
        elif op == "before":
            ok = start.last_day < lo
        elif op == "after":
            ok = start.first_day > hi
        else:  # starts
            ok = start.first_day <= hi and start.last_day >= lo
        if ok:
            out.append(r)
    return out


def _select(rows: list[Row], which: str, n: int) -> list[Row]:
    dated = [r for r in rows if r.fact.start is not None]
    if not dated:
        return []
    days = sorted({r.fact.start.first_day for r in dated if r.fact.start}, reverse=which == "last")
    if n > len(days):
        return []
    day = days[n - 1]
    return [r for r in dated if r.fact.start and r.fact.start.first_day == day]
