"""CIK-LLM's run summary: counts over an evaluation's rows, written to ``report.json`` (``method_metrics``)
through :meth:`tkgqa.methods.base.Method.report_metrics`."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from ...outcomes import AbstainReason, ResultRow

#: Why a relation-path selection failed when the Π_esg prompt is over the model's context window (the
#: ``why`` of :attr:`AbstainReason.PATH_SELECTION_FAILED`; a token limit too).
PATH_OVER_CONTEXT = "the Π_esg prompt does not fit the model's context window"


def _token_limited(reason: str) -> bool:
    """An abstention because a prompt would not fit: the evidence over its limit, or the Π_rog or the Π_esg
    prompt over the model's context window."""
    kind = AbstainReason.of(reason)
    return (kind is not None and kind.token_limit) or (
        reason == AbstainReason.PATH_SELECTION_FAILED.format(why=PATH_OVER_CONTEXT)
    )


def _evidence_step(row: ResultRow) -> dict[str, Any]:
    steps = row.steps("evidence")
    return steps[0] if steps else {}


def run_summary(rows: Sequence[ResultRow]) -> dict[str, Any]:
    """Counts over an evaluation's rows for ``report.json`` (``method_metrics``): questions whose path
    selection failed (for some / every question entity), that used the 1-hop fallback, that abstained
    because no path yielded facts or because of a token limit (a Π_esg prompt over the model's context
    counts in both), and whose evidence exceeded δ2. With the
    fallback off (the paper's preset) failed paths are unanswered questions, so ``answered`` is comparable
    to the paper's Table 2 (which reports hits@1 on the questions answered without such errors)."""
    steps = [_evidence_step(r) for r in rows]
    some = [s for s in steps if s.get("path_failed")]
    every = [s for s in some if set(s.get("path_failed") or ()) >= set(s.get("entities") or ())]
    pruned = [int((s.get("counts") or {}).get("pruned", 0)) for s in steps if s]
    return {
        "questions": len(rows),
        "path_selection_failed": len(some),
        "path_selection_failed_all_entities": len(every),
        "fallback_used": sum(1 for s in steps if s.get("fallback")),
        "abstained_path_selection_failed": sum(
            AbstainReason.of(r.reason) is AbstainReason.PATH_SELECTION_FAILED for r in rows
        ),
        "abstained_token_limit": sum(_token_limited(r.reason) for r in rows),
        "over_delta2": sum(1 for s in steps if s.get("over_delta2")),
        "evidence_facts_mean": fmean(pruned) if pruned else 0.0,
    }
