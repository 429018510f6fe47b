"""CIK-LLM's run summary: counts over an evaluation's rows, written to ``report.json`` (``method_metrics``)
through :meth:`tkgqa.methods.base.Method.report_metrics`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

#: The start of the reason of a question whose relation-path selection failed (paper preset: unanswered).
PATH_FAILED = "path selection failed"


def _evidence_step(row: Mapping[str, Any]) -> Mapping[str, Any]:
    for step in row.get("trace") or ():
        if isinstance(step, Mapping) and step.get("step") == "evidence":
            return step
    return {}


def run_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts over an evaluation's rows for ``report.json`` (``method_metrics``): questions whose path
    selection failed (for some / every question entity), that used the 1-hop fallback, that abstained
    because no path yielded facts or because of a token limit (a Π_esg prompt over the model's context
    counts in both), and whose evidence exceeded δ2. With the
    fallback off (the paper's preset) failed paths are unanswered questions, so ``answered`` is comparable
    to the paper's Table 2 (which reports hits@1 on the questions answered without such errors)."""
    steps = [_evidence_step(r) for r in rows]
    some = [s for s in steps if s.get("path_failed")]
    every = [s for s in some if set(s.get("path_failed") or ()) >= set(s.get("entities") or ())]
    reasons = [str(r.get("reason") or "") for r in rows]
    pruned = [int((s.get("counts") or {}).get("pruned", 0)) for s in steps if s]
    return {
        "questions": len(rows),
        "path_selection_failed": len(some),
        "path_selection_failed_all_entities": len(every),
        "fallback_used": sum(1 for s in steps if s.get("fallback")),
        "abstained_path_selection_failed": sum(r.startswith(PATH_FAILED) for r in reasons),
        "abstained_token_limit": sum(("context window" in r) or ("exceeds the limit" in r) for r in reasons),
        "over_delta2": sum(1 for s in steps if s.get("over_delta2")),
        "evidence_facts_mean": fmean(pruned) if pruned else 0.0,
    }
