"""Answer sets: ranked answers (entity names or ISO times) that keep the facts supporting each one, and the
set and temporal operations on them.

What a multi-step plan passes between its steps (LPKG's ``Ans_k``): :func:`intersect`, :func:`union`,
:func:`time_filter` (the one time semantics, :func:`~tkgqa.time.holds`), :func:`pick` (first/last by start
day, :func:`~tkgqa.time.extreme`) and :func:`compare` (which the executor's ``compare`` node uses too).
Pattern gold answers are the executor's (:meth:`~.executor.Executor.answer_set`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ...errors import DataError
from ...kg.fact import Fact
from ...time import Extreme, Interval, TemporalRelation, TimePoint, extreme, holds, parse_time


class ValueKind(StrEnum):
    ENTITY = "entity"
    TIME = "time"


class CompareMode(StrEnum):
    """Which candidate a comparison keeps: the earlier/later first time, or the larger/smaller number."""

    EARLIER = "earlier"
    LATER = "later"
    MORE = "more"
    LESS = "less"


@dataclass(frozen=True, slots=True)
class Support:
    """One answer (an entity name or an ISO time) and the facts supporting it."""

    value: str
    facts: tuple[Fact, ...]


@dataclass(frozen=True, slots=True)
class AnswerSet:
    """Ranked answers of one kind, each with its supporting facts."""

    kind: ValueKind
    items: tuple[Support, ...] = ()

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def values(self) -> list[str]:
        return [s.value for s in self.items]

    def facts(self) -> list[Fact]:
        return list(dict.fromkeys(f for s in self.items for f in s.facts))

    @classmethod
    def group(cls, kind: ValueKind, pairs: Iterable[tuple[str, Fact]]) -> AnswerSet:
        """Answers from ``(value, fact)`` pairs: most supporting facts first, ties in first-seen order."""
        facts: dict[str, list[Fact]] = {}
        for value, fact in pairs:
            facts.setdefault(value, []).append(fact)
        order = sorted(facts, key=lambda v: -len(facts[v]))  # stable: ties keep first-seen order
        return cls(kind, tuple(Support(v, tuple(dict.fromkeys(facts[v]))) for v in order))

    def earliest(self) -> TimePoint | None:
        """The earliest time in the set: the least time value, or the earliest start of a supporting fact."""
        times = _times(self)
        return min(times, key=lambda t: t.first_day) if times else None


def _times(answers: AnswerSet) -> list[TimePoint]:
    if answers.kind is ValueKind.TIME:
        return [p for v in answers.values() if (p := _parse(v)) is not None]
    return [f.start for s in answers.items for f in s.facts if f.start is not None]


def _parse(text: str) -> TimePoint | None:
    try:
        return parse_time(text)
    except (DataError, ValueError):
        return None


def _merge(kind: ValueKind, groups: Iterable[tuple[str, Iterable[Fact]]]) -> AnswerSet:
    merged: dict[str, list[Fact]] = {}
    for value, facts in groups:
        merged.setdefault(value, []).extend(facts)
    return AnswerSet(kind, tuple(Support(v, tuple(dict.fromkeys(fs))) for v, fs in merged.items()))


def intersect(sets: Sequence[AnswerSet]) -> AnswerSet:
    """The answers in every set (order of the first), with the facts of all."""
    if not sets:
        return AnswerSet(ValueKind.ENTITY)
    common = set(sets[0].values()).intersection(*(s.values() for s in sets[1:]))
    return _merge(sets[0].kind, ((s.value, s.facts) for a in sets for s in a.items if s.value in common))


def union(sets: Sequence[AnswerSet]) -> AnswerSet:
    """The answers in any set (first set's order, then new ones), facts merged."""
    kind = sets[0].kind if sets else ValueKind.ENTITY
    return _merge(kind, ((s.value, s.facts) for a in sets for s in a.items))


def time_filter(answers: AnswerSet, relation: TemporalRelation, reference: TimePoint | Interval) -> AnswerSet:
    """The answers standing in ``relation`` to ``reference``: a time value itself, an entity through any of
    its supporting facts (only the facts that satisfy it are kept)."""
    out = []
    for s in answers.items:
        if answers.kind is ValueKind.TIME:
            t = _parse(s.value)
            if t is not None and holds(relation, t, t, reference):
                out.append(s)
        else:
            kept = tuple(f for f in s.facts if holds(relation, f.start, f.end, reference))
            if kept:
                out.append(Support(s.value, kept))
    return AnswerSet(answers.kind, tuple(out))


def pick(answers: AnswerSet, which: Extreme) -> AnswerSet:
    """The answers at the earliest (``first``) or latest (``last``) start day, ties kept."""
    if answers.kind is ValueKind.TIME:
        keep = {id(s) for s in extreme(answers.items, which, lambda s: _parse(s.value))}
        return AnswerSet(answers.kind, tuple(s for s in answers.items if id(s) in keep))
    pairs = [(s.value, f) for s in answers.items for f in s.facts]
    best = extreme(pairs, which, lambda p: p[1].start)
    return _merge(answers.kind, ((v, (f,)) for v, f in best))


def compare(candidates: Sequence[tuple[str, AnswerSet]], mode: CompareMode) -> AnswerSet:
    """The candidate(s) whose values win: earliest/latest first time, or largest/smallest first number."""
    keyed: list[tuple[float, str, AnswerSet]] = []
    for name, answers in candidates:
        key: float | None
        if mode in (CompareMode.EARLIER, CompareMode.LATER):
            t = answers.earliest()
            key = float(t.first_day) if t is not None else None
        else:
            key = next((n for v in answers.values() if (n := _number(v)) is not None), None)
        if key is not None:
            keyed.append((key, name, answers))
    if not keyed:
        return AnswerSet(ValueKind.ENTITY)
    want_max = mode in (CompareMode.LATER, CompareMode.MORE)
    best = max(k for k, _, _ in keyed) if want_max else min(k for k, _, _ in keyed)
    return AnswerSet(ValueKind.ENTITY, tuple(Support(n, tuple(a.facts())) for k, n, a in keyed if k == best))


def _number(text: str) -> float | None:
    m = re.search(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
    return float(m.group()) if m else None
