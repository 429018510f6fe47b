"""TimeR4 (Qian et al., EMNLP 2024): time-aware retrieve-rewrite-retrieve-rerank (registered "timer4")."""

from .coverage import COVERAGE_NS, QuestionCoverage, question_coverage
from .export import ExportReport, export_instruction_data
from .method import RetrievalStages, TimeR4, TimeR4Config
from .rewrite import accept_rewrite, needs_rewrite

__all__ = [
    "COVERAGE_NS",
    "ExportReport",
    "QuestionCoverage",
    "RetrievalStages",
    "TimeR4",
    "TimeR4Config",
    "accept_rewrite",
    "export_instruction_data",
    "needs_rewrite",
    "question_coverage",
]
