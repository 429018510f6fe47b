"""Evaluation: scoring rules, the KG-supported diagnostic, the run harness and reports."""

from .report import Report, build_report, compare_runs, read_results, write_report
from .runner import evaluate
from .scoring import (
    Gold,
    McNemarResult,
    QuestionScore,
    SetScores,
    breakdown,
    gold_rank,
    lenient_hit,
    mcnemar,
    normalize_answer,
    normalize_text,
    score_answer,
    set_scores,
    strict_hit,
)
from .support import SupportChecker, kg_supported

__all__ = [
    "Gold",
    "McNemarResult",
    "QuestionScore",
    "Report",
    "SetScores",
    "SupportChecker",
    "breakdown",
    "build_report",
    "compare_runs",
    "evaluate",
    "gold_rank",
    "kg_supported",
    "lenient_hit",
    "mcnemar",
    "normalize_answer",
    "normalize_text",
    "read_results",
    "score_answer",
    "set_scores",
    "strict_hit",
    "write_report",
]
