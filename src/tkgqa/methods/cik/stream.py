"""The TKG stream of CIK-LLM §3: snapshots ``K_τ`` of one live store, and the same questions asked again
as knowledge accumulates.

The live store is any :class:`KGStore`. A snapshot is its :meth:`~KGStore.as_of` view: the facts starting
before ``τ``, clipped at ``τ`` — an end on or after ``τ`` becomes open ("still true at ``τ``"), so ``K<2000``
shows (Anderton, team, Tottenham, 1992–open), not the real end 2004: no future information leaks into the
snapshot. It is a view, not a copy, so facts appended to the live store later show up in every snapshot
whose cut time they precede, and nothing is rebuilt — the in-memory store indexes appends incrementally and
CIK-LLM keeps no per-KG index besides the question-entity linker (built on :attr:`KGStore.live`), which is
refreshed only when new entities appear. ``tkgqa eval --as-of 2000`` runs a whole benchmark on one
snapshot (the paper's ``K<1960``, ``K<2000``; ``--as-of all`` is ``K_all``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...datasets.base import Question
from ...kg import Fact, KGStore
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
    """Answers questions against successive snapshots of a growing store (any :class:`KGStore`)."""

    def __init__(self, kg: KGStore, method: Method) -> None:
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
