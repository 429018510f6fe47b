"""Runs a :mod:`.program` over any :class:`~tkgqa.kg.KGStore`.

Rows are facts with the answer variable's binding. Time filters and first/last selections use the one time
semantics of :mod:`tkgqa.time.semantics` (``before``: the fact starts before the reference begins; ``after``:
it starts after the reference ends; ``in``: it shares a day with it), at each side's own granularity. A filter
right on top of a match is first narrowed by the store's time index (:func:`~tkgqa.time.search_window`).
The multi-hop nodes: a ``hop`` reads on from its input's entities (most supporting facts first), ``and`` /
``or`` join parts on their answers, ``compare`` keeps the winning candidate (:mod:`.answer_sets`).
:meth:`Executor.answer_set` gives a program's answers as stored values with their supporting facts (what
pattern grounding and LPKG's readers use); :meth:`Executor.run` ranks and labels them.
Program nodes are dispatched with ``match`` + ``assert_never``: a node type a branch forgets is a mypy error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, assert_never

from ...kg.base import KGStore
from ...kg.fact import Fact
from ...time import (
    Extreme,
    Granularity,
    Interval,
    TemporalRelation,
    TimePoint,
    extreme,
    predicate,
    search_window,
    span_of,
)
from ...time.interval import NEG_INF, POS_INF
from ...trace import TraceStep
from .answer_sets import AnswerSet, ValueKind, compare
from .nodes import (
    AnswerOrder,
    Combine,
    Compare,
    Const,
    Entities,
    Exclude,
    Fallback,
    Filter,
    Hop,
    Match,
    Program,
    ReferenceTime,
    Rows,
    Select,
    SetOperation,
    TimeExpr,
    TimeOf,
    Times,
    paths,
    to_dict,
)
from .steps import ExecutedStep, NodeStep, TimeStep


@dataclass(frozen=True, slots=True)
class Row:
    fact: Fact
    value: str | None


@dataclass(frozen=True)
class Result:
    answers: list[str]
    evidence: list[Fact]
    steps: list[TraceStep] = field(default_factory=list)


_MAX_EVIDENCE = 50
#: Facts a ``select`` step lists as its candidates in the trace (``pool`` counts them all).
TRACE_FACTS = 60


class Executor:
    """Evaluates programs against one KG; records one trace step per node."""

    def __init__(
        self, kg: KGStore, *, max_evidence: int = _MAX_EVIDENCE, priority: dict[Fact, int] | None = None
    ) -> None:
        self.kg = kg
        self.priority = priority or {}
        self.max_evidence = max_evidence
        self.steps: list[TraceStep] = []
        self.reference_facts: list[Fact] = []
        self._times: dict[int, tuple[TimeOf, Interval | TimePoint | None]] = {}  # per run, by id
        self._facts: dict[int, int | None] = {}  # per run: what each node found, by id (None: not counted)

    # --- answers --------------------------------------------------------------------------------
    def _start(self) -> None:
        self.steps = []
        self.reference_facts = []
        self._times = {}
        self._facts = {}

    def answer_set(self, program: Program) -> AnswerSet:
        """``program``'s answers as stored (entity names or ISO times, not labels), each with its supporting
        facts, most facts first (:func:`answers_of`)."""
        self._start()
        return answers_of(self.rows(program.rows), program)

    def run(self, program: Program) -> Result:
        self._start()
        rows = self.rows(program.rows)
        self._facts[id(program)] = len(rows)
        match program:
            case Entities():
                answers, used = self._rank_entities(rows, program.order)
            case Times():
                answers, used = self._rank_times(rows, program.granularity, program.use_end)
            case _:
                assert_never(program)
        evidence = used[: self.max_evidence]
        for f in self.reference_facts:
            if f not in evidence:
                evidence.append(f)
        self.steps.append(ExecutedStep(self.executed(program)))
        return Result(answers, evidence, self.steps)

    def executed(self, program: Program) -> dict[str, Any]:
        """The last run as data: ``{"program": to_dict(program), "facts": {path: n}}`` — the facts each node
        found, by its path (:func:`~.nodes.paths`; ``None``: it ran but found no count of its own, a match
        read inside its filter's time window); a node that did not run (a fallback's unused alternative,
        and everything under it) has no entry, nor has what is under a reference time read from the cache
        (one ``TimeOf`` object in two alternatives is evaluated once: its second place shows the value
        only). What a view of the program shows, without replaying it."""
        facts: dict[str, int | None] = {}
        expanded: set[str] = set()  # paths whose children ran here
        seen: set[int] = set()
        for path, node in paths(program):
            parent = path.rpartition(".")[0] if "." in path else ("" if path else None)
            if id(node) in self._facts and (parent is None or parent in expanded):
                facts[path] = self._facts[id(node)]
                if id(node) not in seen:
                    expanded.add(path)
                seen.add(id(node))
        return {"program": to_dict(program), "facts": facts}

    def _rank_entities(self, rows: list[Row], order: AnswerOrder) -> tuple[list[str], list[Fact]]:
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
        match order:
            case AnswerOrder.RECENT:
                ranked = sorted(counts, key=lambda v: (-latest[v], -counts[v], first_seen[v]))
            case AnswerOrder.EARLIEST:
                ranked = sorted(counts, key=lambda v: (earliest[v], -counts[v], first_seen[v]))
            case AnswerOrder.COUNT:
                ranked = sorted(counts, key=lambda v: (-counts[v], first_seen[v]))
            case _:
                assert_never(order)
        labels = [self.kg.label(v) for v in ranked]
        return labels, self._evidence_of(rows, ranked)

    def _evidence_of(self, rows: list[Row], ranked: list[str]) -> list[Fact]:
        """Facts for every answer, in row order: an equal share of ``max_evidence`` each (so an answer
        with many facts never crowds the others out), unused shares going to the best-ranked answers."""
        by: dict[str, list[Fact]] = {}
        for r in rows:
            if r.value is not None:
                by.setdefault(r.value, []).append(r.fact)
        share = max(1, self.max_evidence // max(1, len(ranked)))
        keep = {v: min(len(by[v]), share) for v in ranked}
        spare = self.max_evidence - sum(keep.values())
        for v in ranked:
            extra = min(max(0, spare), len(by[v]) - keep[v])
            keep[v] += extra
            spare -= extra
        chosen = {id(f) for v in ranked for f in by[v][: keep[v]]}
        return [r.fact for r in rows if id(r.fact) in chosen]

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
        extra: dict[str, Any] = {}
        match node:
            case Match():
                out = self._match(node, None)
            case Filter():
                ref = self.time(node.time)
                if ref is None:
                    out = []
                elif isinstance(node.rows, Match):
                    out = _filter(self._match(node.rows, search_window(node.op, ref)), node.op, ref)
                    self._facts.setdefault(id(node.rows), None)  # matched inside the window: no count
                else:
                    out = _filter(self.rows(node.rows), node.op, ref)
            case Select():
                pool = self.rows(node.rows)
                out = _select(pool, node.which, node.n)
                # the competing facts, so a view can show why the selected one is first/last
                extra = {"candidates": [r.fact.to_dict() for r in pool[:TRACE_FACTS]], "pool": len(pool)}
            case Exclude():
                drop = set(node.entities)
                out = [r for r in self.rows(node.rows) if r.value not in drop]
            case Fallback():
                out = self.rows(node.primary)
                if not out:
                    out = self.rows(node.alternative)
            case Hop():
                out = self._hop(node)
            case Combine():
                out = _combine(node.op, [self.rows(p) for p in node.parts])
            case Compare():
                out = self._compare(node)
            case _:
                assert_never(node)
        self.steps.append(NodeStep(type(node).__name__.lower(), len(out), **extra))
        self._facts[id(node)] = len(out)
        return out

    def time(self, expr: TimeExpr) -> Interval | TimePoint | None:
        match expr:
            case Const():
                return expr.point if expr.end is None else Interval(expr.point, expr.end)
            case TimeOf():
                pass
            case _:
                assert_never(expr)
        cached = self._times.get(id(expr))  # alternatives of one program share their reference event
        if cached is not None and cached[0] is expr:
            return cached[1]
        value = self._time_of(expr)
        self._times[id(expr)] = (expr, value)
        return value

    def _time_of(self, expr: TimeOf) -> Interval | TimePoint | None:
        found = self.rows(expr.rows)
        rows = [r for r in found if r.fact.start is not None]
        self._facts[id(expr)] = len(found) if rows else 0  # rows without a start time: no reference time
        if not rows:
            return None
        pick = _select(rows, Extreme.LAST if expr.which is ReferenceTime.LAST else Extreme.FIRST, 1)
        fact = pick[0].fact
        self.reference_facts.append(fact)
        point = fact.start
        assert point is not None
        if expr.which is ReferenceTime.SPAN:
            span = Interval(point, fact.end if fact.end is None or fact.end >= point else point)
            self.steps.append(TimeStep(str(span), fact.to_dict()))
            return span
        self.steps.append(TimeStep(point.iso(), fact.to_dict()))
        return point.coarsen(expr.granularity) if expr.granularity else point

    def _hop(self, node: Hop) -> list[Row]:
        sources = entities_of(self.rows(node.rows)).values()  # most supporting facts first
        drop = set(sources)
        out: list[Row] = []
        for s in sources:
            if node.inverse:
                found = [Row(f, f.subject) for f in self.kg.facts(object=s, relation=node.relation)]
            else:
                found = [Row(f, f.object) for f in self.kg.facts(subject=s, relation=node.relation)]
            out.extend(r for r in found if r.value not in drop)
        return out

    def _compare(self, node: Compare) -> list[Row]:
        found = [(name, self.rows(rows)) for name, rows in node.candidates]
        won = set(compare([(name, _bare(rows)) for name, rows in found], node.mode).values())
        return [Row(r.fact, name) for name, rows in found if name in won for r in rows]

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


def entities_of(rows: Iterable[Row]) -> AnswerSet:
    """The entities ``rows`` bind, each with its facts: most facts first, ties in first-seen order."""
    return AnswerSet.group(ValueKind.ENTITY, ((r.value, r.fact) for r in rows if r.value is not None))


def times_of(rows: Iterable[Row], granularity: Granularity | None = None, use_end: bool = False) -> AnswerSet:
    """The start (``use_end``: end) times of ``rows``' facts as ISO text, at ``granularity`` (``None``: as
    stored), each with its facts: most facts first, ties in first-seen order."""
    pairs = []
    for r in rows:
        t = r.fact.end if use_end else r.fact.start
        if t is not None:
            pairs.append(((t.coarsen(granularity) if granularity else t).iso(), r.fact))
    return AnswerSet.group(ValueKind.TIME, pairs)


def answers_of(rows: Iterable[Row], program: Program) -> AnswerSet:
    """What ``program`` answers from its ``rows``: the bound entities (``entities``) or the facts' times
    (``times``), with their supporting facts."""
    match program:
        case Entities():
            return entities_of(rows)
        case Times():
            return times_of(rows, program.granularity, program.use_end)
        case _:
            assert_never(program)


def _bare(rows: list[Row]) -> AnswerSet:
    """A compared candidate's answers: its bound entities, or its facts' times when it binds none."""
    return entities_of(rows) if any(r.value is not None for r in rows) else times_of(rows)


def _combine(op: SetOperation, parts: list[list[Row]]) -> list[Row]:
    if op is SetOperation.OR:
        return [r for part in parts for r in part]
    common = set.intersection(*({r.value for r in part if r.value is not None} for part in parts))
    return [r for part in parts for r in part if r.value in common]


def _filter(rows: Iterable[Row], op: TemporalRelation, ref: Interval | TimePoint) -> list[Row]:
    lo, hi = span_of(ref)
    test = predicate(op)
    return [r for r in rows if test(r.fact.start, r.fact.end, lo, hi)]


def _select(rows: list[Row], which: Extreme, n: int) -> list[Row]:
    return extreme(rows, which, lambda r: r.fact.start, n)
