"""The TKG stream of CIK-LLM §3: snapshots ``K_τ`` of one live store, and the same questions asked again
as knowledge accumulates.

A snapshot is :meth:`TemporalKG.as_of` (facts starting before ``τ``): a view, not a copy, so facts appended
to the live store later show up in every snapshot whose cut time they precede, and nothing is rebuilt —
the store indexes appends incrementally and CIK-LLM keeps no per-KG index besides the question-entity
linker, which is refreshed only when new entities appear. Interval facts that start before ``τ`` keep their
real end (the view does not clip them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...datasets.base import Question
from ...kg import Fact, KGStore, TemporalKG
from ...time import TimePoint, parse_time
from ..base import Answer, Method


@dataclass(frozen=True)
class StreamResult:
    """One question answered against one snapshot."""

    cut: str
    qid: str
    answer: Answer
    n_facts: int


class CIKStream:
    """Answers questions against successive snapshots of a growing :class:`TemporalKG`."""

    def __init__(self, kg: TemporalKG, method: Method) -> None:
        self.kg = kg
        self.method = method

    def snapshot(self, cut: TimePoint | str | None) -> KGStore:
        """``K_τ``: the facts starting before ``cut`` (``None``: the whole live store)."""
        if cut is None:
            return self.kg
        return self.kg.as_of(parse_time(cut) if isinstance(cut, str) else cut)

    def append(self, facts: Iterable[Fact]) -> int:
        """New knowledge: visible to the next question, in every snapshot it precedes."""
        return self.kg.add(facts)

    def answer(self, question: Question, cut: TimePoint | str | None = None) -> Answer:
        return self.method.answer(question, self.snapshot(cut))

    def run(
        self, questions: Sequence[Question], cuts: Sequence[TimePoint | str | None]
    ) -> list[StreamResult]:
        """Every question against every snapshot, in cut order (the paper's ``K<1960, K<2000, K_all``)."""
        out: list[StreamResult] = []
        for cut in cuts:
            snap = self.snapshot(cut)
            size = len(snap)
            label = "all" if cut is None else str(cut)
            for q in questions:
                out.append(StreamResult(label, q.qid, self.method.answer(q, snap), size))
        return out
