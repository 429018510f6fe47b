"""TimeR4 (Qian et al., EMNLP 2024): time-aware retrieve-rewrite-retrieve-rerank (registered "timer4").

``preset=paper`` (default) is the paper's configuration, ``preset=ours`` the project's variants
(:mod:`.config`; ``docs/timer4_paper_vs_ours.md``). The rewrite runs with an LLM (the paper's) or offline
through the KG (:func:`kg_rewrite`, ours).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, each imported on first use (lazy_exports below)
    from .config import PRESETS, PhiNorm, Preset, RewritePolicy, Scope
    from .coverage import COVERAGE_NS, QuestionCoverage, question_coverage
    from .export import ExportReport, export_instruction_data
    from .method import RetrievalStages, TimeR4Config, TimeR4Method
    from .rewrite import (
        KGRewrite,
        RewriteAnchor,
        RewriteCheck,
        RewriteMode,
        RewriteOutcome,
        RewriteVerdict,
        accept_rewrite,
        check_rewrite,
        kg_rewrite,
        needs_rewrite,
        place_time,
    )

__all__ = [
    "COVERAGE_NS",
    "PRESETS",
    "ExportReport",
    "KGRewrite",
    "PhiNorm",
    "Preset",
    "QuestionCoverage",
    "RetrievalStages",
    "RewriteAnchor",
    "RewriteCheck",
    "RewriteMode",
    "RewriteOutcome",
    "RewritePolicy",
    "RewriteVerdict",
    "Scope",
    "TimeR4Config",
    "TimeR4Method",
    "accept_rewrite",
    "check_rewrite",
    "export_instruction_data",
    "kg_rewrite",
    "needs_rewrite",
    "place_time",
    "question_coverage",
]

__getattr__ = lazy_exports(__name__, type_checking_exports(__file__), globals())
