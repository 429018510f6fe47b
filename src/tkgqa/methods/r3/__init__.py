"""R3 (Right for Right Reasons, Toroghi et al. 2024): verifiable commonsense KGQA — axioms surfaced from the
LLM, every factual step grounded on cited KG facts, tree search on "I don't know" — and the baselines of its
tables (``kaping``, ``cot0``, ``cot2``). See :mod:`.method`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, each imported on first use (lazy_exports below)
    from .baselines import KAPING, CoT0, CoT2
    from .config import BaselineConfig, EntitySource, LLMPick, PremiseJudge, R3Config
    from .facts import Direction, FactPool, Pruning, Ranker, render_fact, subgraph
    from .grounding import Grounding, grounding_of, grounding_score
    from .method import R3Method

__all__ = [
    "KAPING",
    "BaselineConfig",
    "CoT0",
    "CoT2",
    "Direction",
    "EntitySource",
    "FactPool",
    "Grounding",
    "LLMPick",
    "PremiseJudge",
    "Pruning",
    "R3Config",
    "R3Method",
    "Ranker",
    "grounding_of",
    "grounding_score",
    "render_fact",
    "subgraph",
]

__getattr__ = lazy_exports(__name__, type_checking_exports(__file__), globals())
