"""TimeR4 Figure 3 offline: answer coverage@n of each retrieval stage.

For each question, whether a gold answer (label-normalised entity, or time at its own granularity; see
:func:`tkgqa.methods.cik.grounding.answer_covered`) appears among the first ``n`` facts retrieved by FKS,
TKS and TKS + φ_t rerank, for n ∈ {5, 10, 15, 20}. The rewrite step runs only when the method has an LLM;
otherwise TKS retrieves with the original question (and equals FKS unless a time-aware ``tks_embedder`` is
configured).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from ...datasets.base import Question
from ...kg import KGStore
from ..cik.grounding import coverage_at
from .method import TimeR4

COVERAGE_NS = (5, 10, 15, 20)
STAGES = ("fks", "tks", "tks_rerank")


@dataclass(frozen=True)
class QuestionCoverage:
    qid: str
    covered: dict[str, dict[int, bool]]
    rewritten: bool
    scope: str
    n_candidates: int | None
    qtype: str = ""


def question_coverage(
    method: TimeR4, question: Question, kg: KGStore, ns: Sequence[int] = COVERAGE_NS
) -> QuestionCoverage:
    k = max(ns)
    rewritten: str | None = None
    if method.llm is not None and method.config.rewrite:
        fks = method.fks.retrieve(
            question.text,
            kg,
            method.config.rewrite_facts,
            candidate_ids=method.scope(question, kg)[0],
            rerank=False,
        )
        text, _, _ = method.rewrite(question.text, fks, kg)
        rewritten = text if text != question.text else None
    stages = method.retrieve(question, kg, rewritten=rewritten, k=k)
    covered = {
        name: coverage_at(question.answers, [s.fact for s in getattr(stages, name)], ns, kg)
        for name in STAGES
    }
    return QuestionCoverage(
        question.qid, covered, rewritten is not None, stages.scope, stages.n_candidates, question.qtype or ""
    )


def summarize(
    rows: Sequence[QuestionCoverage], ns: Sequence[int] = COVERAGE_NS, *, method: TimeR4 | None = None
) -> dict[str, Any]:
    """The ``coverage.json`` body for TimeR4: ``{stage: {"5": frac, …}}`` plus run details."""
    out: dict[str, Any] = {
        name: {str(n): (fmean(r.covered[name][n] for r in rows) if rows else 0.0) for n in ns}
        for name in STAGES
    }
    scopes: dict[str, int] = {}
    for r in rows:
        scopes[r.scope] = scopes.get(r.scope, 0) + 1
    sizes = [r.n_candidates for r in rows if r.n_candidates is not None]
    qtypes = sorted({r.qtype for r in rows if r.qtype})
    out["by_qtype"] = {
        t: {name: fmean(r.covered[name][max(ns)] for r in rows if r.qtype == t) for name in STAGES}
        | {"questions": sum(r.qtype == t for r in rows)}
        for t in qtypes
    }  # coverage at the largest n, per question type
    out["questions"] = len(rows)
    out["rewritten"] = sum(r.rewritten for r in rows)
    out["scopes"] = scopes
    out["mean_candidates"] = fmean(sizes) if sizes else None
    if method is not None:
        out["config"] = method.config.model_dump(mode="json")
        out["embedders"] = {"fks": method.fks.embedder.name, "tks": method.tks.embedder.name}
    return out
