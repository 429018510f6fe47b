"""TimeR4 Figure 3 offline: answer coverage@n of each retrieval stage.

For each question, whether a gold answer (label-normalised entity, or time at its own granularity; see
:func:`tkgqa.query.coverage.answer_covered`) appears among the first ``n`` facts retrieved by FKS,
TKS and TKS + φ_t rerank, for n ∈ {5, 10, 15, 20}. The rewrite stage runs as the method is configured
(:class:`~tkgqa.methods.timer4.rewrite.RewriteMode`; by default the LLM rewrite with an LLM, the offline KG
rewrite without): TKS retrieves with the rewritten question, the rerank uses the constraint the KG rewrite
resolved. Without a rewrite (``rewrite=off``, or a question with no implicit time) TKS equals FKS unless a
trained time-aware retriever is found or given (``tks_embedder``; ``tks_models`` in the summary says which
ran).

:data:`ANALYSIS` is ``tkgqa analyze coverage --method timer4``: ``coverage.json`` holds
``{"fks": {"5": …, "10": …, "15": …, "20": …}, "tks": {…}, "tks_rerank": {…}}`` (TimeR4 Figure 3), also per
question type (``by_qtype``). The rewrite is the LLM's with ``--llm``, else offline through the KG
(``-o rewrite=off|kg|llm|auto``); ``per_question.jsonl`` records each question's rewrite and the constraint
the rerank used. ``--embedder``, ``--tks-embedder`` and ``--scope`` set the method's options of those names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from ...datasets.base import Question
from ...kg import KGStore
from ...query.coverage import coverage_at
from ..analyses import Analysis, Each, SummaryTable
from .method import TimeR4Method
from .steps import RewriteStep

COVERAGE_NS = (5, 10, 15, 20)
STAGES = ("fks", "tks", "tks_rerank")


@dataclass(frozen=True)
class QuestionCoverage:
    qid: str
    covered: dict[str, dict[int, bool]]
    rewritten: bool
    scope: str
    n_candidates: int | None
    rewrite: RewriteStep  # the rewrite trace step
    qtype: str = ""
    time_constraint: str | None = None  # what the rerank used
    tks_model: str = ""  # which time-aware retriever ran (trained, or the FKS model)


def question_coverage(
    method: TimeR4Method, question: Question, kg: KGStore, ns: Sequence[int] = COVERAGE_NS
) -> QuestionCoverage:
    k = max(ns)
    ids = method.scope(question, kg)[0]
    outcome = method.rewrite(question, method.rewrite_facts(question, kg, ids), kg)
    stages = method.retrieve(
        question,
        kg,
        rewritten=outcome.text if outcome.rewritten else None,
        k=k,
        time_constraint=outcome.constraint,
    )
    covered = {
        name: coverage_at(question.answers, [s.fact for s in getattr(stages, name)], ns, kg)
        for name in STAGES
    }
    used = method.tks.resolve_constraint(stages.query, outcome.constraint or "auto")
    return QuestionCoverage(
        question.qid,
        covered,
        outcome.rewritten,
        stages.scope,
        stages.n_candidates,
        outcome.step,
        question.qtype or "",
        None if used is None else str(used),
        stages.tks_model,
    )


def summarize(
    rows: Sequence[QuestionCoverage], ns: Sequence[int] = COVERAGE_NS, *, method: TimeR4Method | None = None
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
        t: {
            name: {str(n): fmean(r.covered[name][n] for r in rows if r.qtype == t) for n in ns}
            for name in STAGES
        }
        | {
            "questions": sum(r.qtype == t for r in rows),
            "rewritten": sum(r.rewritten for r in rows if r.qtype == t),
        }
        for t in qtypes
    }
    out["questions"] = len(rows)
    out["rewritten"] = sum(r.rewritten for r in rows)
    out["rewrite_modes"] = dict(Counter(r.rewrite.mode for r in rows if r.rewritten))
    out["reranked"] = sum(r.time_constraint is not None for r in rows)
    out["scopes"] = scopes
    out["mean_candidates"] = fmean(sizes) if sizes else None
    if method is not None:
        out["config"] = method.config.model_dump(mode="json")
        out["embedders"] = {"fks": method.fks.embedder.name}
        out["preset"] = str(method.config.preset)
        out["deviations"] = method.describe()["deviations"]
    out["tks_models"] = dict(Counter(r.tks_model for r in rows))
    return out


def _run(each: Each, llm: str | None, options: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    method = TimeR4Method(llm=llm, **options)
    rows = each("timer4 coverage", lambda q, kg: question_coverage(method, q, kg))
    return summarize(rows, method=method), [
        {
            "qid": r.qid,
            "qtype": r.qtype,
            "scope": r.scope,
            "candidates": r.n_candidates,
            "rewritten": r.rewritten,
            "rewrite": {k: v for k, v in r.rewrite.items() if k != "step"},
            "time_constraint": r.time_constraint,
            "covered": {s: {str(n): v for n, v in c.items()} for s, c in r.covered.items()},
        }
        for r in rows
    ]


def _table(summary: Mapping[str, Any]) -> SummaryTable:
    ns = tuple(str(n) for n in COVERAGE_NS)
    rows = tuple((stage, *(f"{summary[stage][n]:.3f}" for n in ns)) for stage in STAGES)
    return SummaryTable("answer coverage", ("stage", *(f"@{n}" for n in ns)), rows)


#: ``tkgqa analyze coverage --method timer4``
ANALYSIS = Analysis(_run, _table, options=("embedder", "tks_embedder", "scope"))
