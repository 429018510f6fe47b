"""Offline measurements of the CIK-LLM evidence pipeline (the paper's Table 3 and Figure 5).

Per question (:func:`question_stats`): facts and tokens after retrieval / multi-hop truncation / time-aware
pruning and the δ2 cap (tokens of the plain rendering, as Table 3 counts the prompt before compression),
tokens of the final evidence plain vs compressed (ours: variables + indented time tree, associative map
included; ``compressed_map``: the map's share; ``compressed_paper``: the paper's exact form, variables
only), whether a gold answer is among the facts of each stage, and the Figure 5 curve: the renderings of
the first ``n`` facts of the truncated set. :func:`summarize` averages over questions. Tokens:
:func:`tkgqa.llm.count_tokens` (a given tokenizer, e.g. SmolLM2's; cl100k when cached offline; else its
approximation). Each question also records whether its path selection failed for some entity / for all
of them, whether the 1-hop fallback was used and whether more than δ2 facts remained.

``run_summary.run_summary`` counts the same from an evaluation's ``results.jsonl`` rows (their ``evidence``
trace step) for ``report.json``: path selection failures, fallbacks, abstentions, sets above δ2.

:data:`ANALYSIS` is ``tkgqa analyze coverage --method cik``: ``coverage.json`` holds ``{"facts": {"retrieved",
"truncated", "pruned"}, "tokens": {"uncompressed", "compressed"}, "answer_coverage"}`` (means over questions;
CIK-LLM Table 3 / Figure 5) plus details. Relation paths come from the LLM with ``--llm``, else from the
deterministic lexical policy; ``--tokenizer smollm2`` counts tokens with a local model's tokenizer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from statistics import fmean, pstdev
from typing import Any

from ...datasets.base import Question
from ...kg import KGStore
from ...llm.tokens import Tokenizer, counter_name
from ...query.coverage import answer_covered
from ..analyses import Analysis, Each, SummaryTable
from .evidence import render_plain, token_counts
from .method import CIKMethod, EvidenceStages

STAGES = ("retrieved", "truncated", "time_pruned", "pruned")
RENDERINGS = ("uncompressed", "compressed", "compressed_map", "compressed_paper")
CURVE_SIZES = (5, 10, 20, 30, 50, 100, 200, 300)


@dataclass(frozen=True)
class QuestionStats:
    qid: str
    n_entities: int
    facts: dict[str, int]
    tokens: dict[str, int]
    covered: dict[str, bool]
    curve: dict[int, dict[str, int]]  # n facts → token counts of the renderings (and the map's share)
    qtype: str = ""
    path_failed: int = 0  # question entities whose path selection failed
    fallback: int = 0  # of those, how many used the 1-hop fallback
    over_delta2: bool = False


def question_stats(
    method: CIKMethod,
    question: Question,
    kg: KGStore,
    stages: EvidenceStages | None = None,
    *,
    curve_sizes: Sequence[int] = CURVE_SIZES,
    tokenizer: Tokenizer | None = None,
) -> QuestionStats:
    """Facts, tokens, coverage and compression curve of one question (no LLM unless ``stages`` used one)."""
    st = stages or method.evidence(question, kg, use_llm=False)
    by_stage = {
        "retrieved": st.retrieved,
        "truncated": st.truncated,
        "time_pruned": st.time_pruned,
        "pruned": st.pruned,
    }
    facts = {k: len(v) for k, v in by_stage.items()}
    tokens = {k: (render_plain(v, kg).tokens(tokenizer) if v else 0) for k, v in by_stage.items()}
    tokens.update(token_counts(st.pruned, kg, st.entities, tokenizer))
    covered = {k: answer_covered(question.answers, [it.fact for it in v], kg) for k, v in by_stage.items()}
    curve = {
        n: token_counts(st.truncated[:n], kg, st.entities, tokenizer)
        for n in curve_sizes
        if len(st.truncated) >= n
    }
    return QuestionStats(
        question.qid,
        len(st.entities),
        facts,
        tokens,
        covered,
        curve,
        question.qtype or "",
        len(st.path_failed),
        sum(t.fallback for t in st.traversals),
        st.over_delta2,
    )


def _mean_std(values: Iterable[float]) -> dict[str, float]:
    vals = list(values)
    if not vals:
        return {"mean": 0.0, "std": 0.0}
    return {"mean": fmean(vals), "std": pstdev(vals)}


def _ratios(tokens: dict[str, float]) -> dict[str, float]:
    plain = tokens["uncompressed"]
    return {
        "ratio": plain / tokens["compressed"] if tokens["compressed"] else 0.0,
        "ratio_paper": plain / tokens["compressed_paper"] if tokens["compressed_paper"] else 0.0,
    }


def summarize(
    stats: Sequence[QuestionStats], *, method: CIKMethod | None = None, token_counter: str | None = None
) -> dict[str, Any]:
    """The ``coverage.json`` body for CIK: means over questions, stds, per-stage coverage, the curve."""
    n = len(stats)
    facts = {k: _mean_std(s.facts[k] for s in stats) for k in STAGES}
    tokens = {k: _mean_std(s.tokens[k] for s in stats) for k in (*STAGES, *RENDERINGS)}
    curve: dict[str, dict[str, float]] = {}
    for size in sorted({k for s in stats for k in s.curve}):
        rows = [s.curve[size] for s in stats if size in s.curve]
        means = {k: fmean(r[k] for r in rows) for k in RENDERINGS}
        curve[str(size)] = {"questions": len(rows), **means, **_ratios(means)}
    totals = {k: float(sum(s.tokens[k] for s in stats)) for k in RENDERINGS}
    return {
        "facts": {k: facts[k]["mean"] for k in STAGES},
        "tokens": {k: tokens[k]["mean"] for k in RENDERINGS},
        "answer_coverage": fmean(s.covered["pruned"] for s in stats) if n else 0.0,
        "answer_coverage_by_stage": {k: (fmean(s.covered[k] for s in stats) if n else 0.0) for k in STAGES},
        "facts_detail": facts,
        "tokens_detail": tokens,
        "compression_ratio": _ratios(totals)["ratio"],
        "compression_ratio_paper": _ratios(totals)["ratio_paper"],
        "compression_curve": curve,
        "by_qtype": {
            t: {k: fmean(s.covered[k] for s in stats if s.qtype == t) for k in STAGES}
            | {"questions": sum(s.qtype == t for s in stats)}
            for t in sorted({s.qtype for s in stats if s.qtype})
        },
        "questions": n,
        "questions_with_entities": sum(1 for s in stats if s.n_entities),
        "path_selection_failed": sum(1 for s in stats if s.path_failed),
        "path_selection_failed_all": sum(1 for s in stats if s.n_entities and s.path_failed == s.n_entities),
        "fallback_used": sum(1 for s in stats if s.fallback),
        "over_delta2": sum(1 for s in stats if s.over_delta2),
        "over_delta2_fraction": fmean(s.over_delta2 for s in stats) if n else 0.0,
        "token_counter": token_counter or counter_name(),
        "config": method.config.model_dump(mode="json") if method is not None else {},
    }


def _tokenizer(name: str | None) -> Tokenizer | None:
    """``None``: the default counter; otherwise a local llama.cpp model's tokenizer (``smollm2``)."""
    if not name:
        return None
    from ...llm.llamacpp_backend import LlamaCppBackend

    return LlamaCppBackend(name).tokenize


def _run(each: Each, llm: str | None, options: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    tokenizer_name = options.pop("tokenizer", None)
    method = CIKMethod(llm=llm, **options)
    tokenizer = _tokenizer(tokenizer_name)

    def one(q: Question, kg: KGStore) -> QuestionStats:
        stages = method.evidence(q, kg, use_llm=llm is not None)
        return question_stats(method, q, kg, stages, tokenizer=tokenizer)

    rows = each("cik evidence", one)
    summary = summarize(rows, method=method, token_counter=tokenizer_name)
    summary["path_selection"] = "llm" if llm else "lexical (deterministic, offline)"
    return summary, [{**asdict(r), "curve": {str(k): v for k, v in r.curve.items()}} for r in rows]


def _table(summary: Mapping[str, Any]) -> SummaryTable:
    rows = tuple(
        (stage, f"{summary['facts'][stage]:.1f}", f"{summary['answer_coverage_by_stage'][stage]:.3f}")
        for stage in ("retrieved", "truncated", "pruned")
    )
    tok = summary["tokens"]
    caption = f"tokens: {tok['uncompressed']:.0f} plain → {tok['compressed']:.0f} compressed"
    return SummaryTable("evidence", ("stage", "facts", "answer coverage"), rows, caption)


#: ``tkgqa analyze coverage --method cik``
ANALYSIS = Analysis(_run, _table, options=("tokenizer",))
