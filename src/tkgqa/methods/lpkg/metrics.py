"""LPKG's plan metrics over evaluation rows (``report.json`` → ``method_metrics``).

* ``plan_parse_rate`` — the planner's reply parsed into a plan (before any fallback);
* ``plan_shape_accuracy`` — the plan's pattern is the question's (only over questions whose pattern is known:
  generated questions and CLQA-Wiki carry it as ``qtype``; MultiTQ's question types map to the accepted
  temporal patterns in :data:`MULTITQ_PATTERNS`); an unparsed plan counts as wrong;
* ``plan_exact_set`` — the executed answers equal the gold set *and* they came from the planner's own plan
  (a fallback to asking the question directly counts as a miss; ``exact_set`` in the report's metrics
  counts it);
* per question type: n, parse rate, shape accuracy, exact set match of the executed answers (with and
  without fallbacks), and the distribution of predicted patterns; plus planning seconds per question and
  plans/s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ...outcomes import ResultRow
from ...query.generate.patterns import PatternType

#: MultiTQ question type → the patterns a correct plan may have
MULTITQ_PATTERNS: dict[str, frozenset[str]] = {
    "equal": frozenset({"in", "t?"}),
    "before_after": frozenset({"before", "after"}),
    "first_last": frozenset({"first", "last"}),
    "after_first": frozenset({"after_first"}),
    "before_last": frozenset({"before_last"}),
    "equal_multi": frozenset({"in"}),
}
_PATTERNS = frozenset(p.value for p in PatternType)


def expected_patterns(row: ResultRow) -> frozenset[str] | None:
    qtype = row.qtype
    if not isinstance(qtype, str):
        return None
    if qtype in _PATTERNS:
        return frozenset({qtype})
    if row.dataset == "multitq" or qtype in MULTITQ_PATTERNS:
        return MULTITQ_PATTERNS.get(qtype)
    return None


def plan_step(row: ResultRow) -> dict[str, Any] | None:
    steps = row.steps("plan")
    return steps[0] if steps else None


def plan_metrics(rows: Sequence[ResultRow]) -> dict[str, Any]:
    planned = [(r, s) for r in rows if (s := plan_step(r)) is not None]
    if not planned:
        return {}
    by_type: dict[str, dict[str, Any]] = {}
    judged = shape_ok = 0
    seconds = 0.0
    for row, step in planned:
        qtype = str(row.qtype or "?")
        entry = by_type.setdefault(qtype, {"n": 0, "parsed": 0, "judged": 0, "shape_ok": 0, "exact_set": 0,
                                           "plan_exact_set": 0, "predicted": Counter()})  # fmt: skip
        entry["n"] += 1
        entry["parsed"] += bool(step.get("parsed"))
        entry["exact_set"] += bool(row.exact_set)
        entry["plan_exact_set"] += bool(row.exact_set) and bool(step.get("parsed"))
        predicted = step.get("pattern") if step.get("parsed") else None
        entry["predicted"][str(predicted or "unparsed/other")] += 1
        want = expected_patterns(row)
        if want is not None:
            ok = predicted in want
            entry["judged"] += 1
            entry["shape_ok"] += ok
            judged += 1
            shape_ok += ok
        seconds += float(step.get("seconds") or 0.0)
    n = len(planned)
    per_type = {
        k: {
            "n": e["n"],
            "plan_parse_rate": e["parsed"] / e["n"],
            "plan_shape_accuracy": e["shape_ok"] / e["judged"] if e["judged"] else None,
            "exact_set": e["exact_set"] / e["n"],
            "plan_exact_set": e["plan_exact_set"] / e["n"],
            "predicted_patterns": dict(e["predicted"].most_common()),
        }
        for k, e in sorted(by_type.items())
    }
    mean_s = seconds / n
    return {
        "n_planned": n,
        "plan_parse_rate": sum(bool(s.get("parsed")) for _, s in planned) / n,
        "plan_fallback_rate": sum(bool(s.get("fallback")) for _, s in planned) / n,
        "plan_shape_accuracy": shape_ok / judged if judged else None,
        "plan_shape_judged": judged,
        "plan_exact_set": sum(e["plan_exact_set"] for e in by_type.values()) / n,
        "planning_seconds_per_question": mean_s,
        "plans_per_second": 1 / mean_s if mean_s > 0 else None,
        "per_type": per_type,
    }
