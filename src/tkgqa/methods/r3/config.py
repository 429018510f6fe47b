"""R3's settings (every ablation of the paper is an option) and the baselines' settings."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from ..base import MethodConfig
from .facts import Direction, Pruning


class EntitySource(StrEnum):
    UNION = "union"  # R3: the KG linker ∪ the LLM extractor (Eq. 1)
    LINKER = "linker"  # Table 6: "without LLM-based entity extractor"
    LLM = "llm"  # Table 6: "without entity linker"


class LLMPick(StrEnum):
    RELATIONS = "relations"  # the LLM picks relations of the rest of the sub-graph; their facts are added
    FACTS = "facts"  # the LLM picks facts (ids) among the next-best candidates (the paper's LLM_T wording)
    OFF = "off"  # embedding top-k only


class PremiseJudge(StrEnum):
    LLM = "llm"  # the LLM checks each premise against the facts, citing them
    EMBEDDING = "embedding"  # offline: a premise holds when it is similar enough to the option's facts


class R3Config(MethodConfig):
    """R3 (Toroghi et al. 2024). Defaults follow the paper where it says (depth 2, top-k pruning ∪ LLM, the
    union of entity extractors); ``breadth`` (how many axioms/branches) and ``top_k`` it leaves open."""

    llm: str | None = None
    max_depth: int = Field(default=2, ge=0, le=5)  # expansions per branch (Table 8: 0, 1, 2, 3)
    breadth: int = Field(default=2, ge=1, le=5)  # branches: a new axiom when a branch ends without answer
    top_k: int = Field(default=10, ge=1, le=200)  # facts kept per pruning round
    pruning: Pruning = Pruning.SEMANTIC
    llm_pick: LLMPick = LLMPick.RELATIONS  # the "∪ relations the LLM picks"; "facts" = the paper's
    llm_pool: int = Field(default=30, ge=0, le=300)  # most candidates beyond the top-k the LLM adds
    direction: Direction = Direction.HEAD
    entities: EntitySource = EntitySource.UNION
    max_entities: int = Field(default=6, ge=1, le=20)
    link_min_score: float = Field(default=0.85, ge=0.5, le=1.0)  # fuzzy linking of LLM-named entities
    embedder: str = "minilm"
    grounding_retries: int = Field(default=2, ge=0, le=5)  # re-asks after a step cites an unlisted fact
    require_citation: bool = True  # a Yes/No must cite at least one fact
    judge: PremiseJudge = PremiseJudge.LLM
    judge_threshold: float = Field(default=0.45, ge=-1.0, le=1.0)
    retries: int = Field(default=1, ge=0, le=3)  # parse retries of the other prompts
    max_tokens: int = Field(default=512, ge=16)
    axiom_facts: int = Field(default=15, ge=0, le=100)  # sub-graph facts shown when surfacing the axiom


class BaselineConfig(MethodConfig):
    """``kaping`` (top-k facts by similarity to the question, then answer) and the CoT baselines."""

    llm: str | None = None
    shots: int = Field(default=0, ge=0, le=2)
    top_k: int = Field(default=10, ge=1, le=200)
    direction: Direction = Direction.HEAD
    max_entities: int = Field(default=6, ge=1, le=20)
    embedder: str = "minilm"
    retries: int = Field(default=1, ge=0, le=3)
    max_tokens: int = Field(default=384, ge=16)


#: Bare-word options: ``--method "r3:truncation,linker_only"``.
SPEC_FLAGS: dict[str, tuple[str, Any]] = {
    "truncation": ("pruning", "truncation"),
    "semantic": ("pruning", "semantic"),
    "linker_only": ("entities", "linker"),
    "no_llm_extractor": ("entities", "linker"),
    "llm_only_entities": ("entities", "llm"),
    "no_linker": ("entities", "llm"),
    "no_llm_pick": ("llm_pick", "off"),
    "pick_relations": ("llm_pick", "relations"),
    "pick_facts": ("llm_pick", "facts"),
    "both_directions": ("direction", "both"),
    "embedding_judge": ("judge", "embedding"),
    "no_citation_required": ("require_citation", False),
}
