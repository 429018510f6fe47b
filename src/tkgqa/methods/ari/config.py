"""``ARIConfig``: every setting of the ARI method (serialized into evaluation results)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..base import MethodConfig

PolicyName = Literal["llm", "symbolic", "oracle"]
ChoiceMode = Literal["auto", "constrained", "free"]


class ARIConfig(MethodConfig):
    """Settings of ARI (Chen et al., 2024). Paper defaults: ``t_max=5``, ``n_clusters=10``, 200 history
    questions, 3 correct + 3 incorrect examples per cluster.

    Ablations (paper Table 2): ``no_guidance`` (no methodology in the prompt), ``no_clustering`` (one global
    methodology induced from the whole memory), ``no_filter`` (every enumerated action is offered, without
    the non-empty check nor the top-K), ``no_incorrect`` (methodologies induced from correct examples only).
    """

    policy: PolicyName = "llm"
    llm: str | None = Field(default=None, description="LLM spec for policy 'llm', e.g. 'llamacpp:smollm2'")
    top_k: int = Field(default=15, ge=1, description="lookup actions kept by the filter (semantic top-K)")
    t_max: int = Field(default=5, ge=1, description="maximum number of actions, the answer included")
    n_clusters: int = Field(default=10, ge=1)
    examples_per_kind: int = Field(default=3, ge=0, description="correct/incorrect examples per cluster")
    memory: str | None = Field(default=None, description="history memory JSON (tkgqa ari build-memory)")
    embedder: str = Field(default="hashing", description="'hashing', 'model2vec', 'minilm' or 'lexical'")
    max_result_items: int = Field(default=3, ge=1, description="result entries shown to the model per step")
    max_entities: int = Field(default=2, ge=1, description="linked question entities used as anchors")
    n_answer_entities: int = Field(default=3, ge=1, description="answer(entity) candidates per step")
    n_answer_times: int = Field(default=2, ge=0, description="distinct times offered as answer(time)")
    max_candidates: int = Field(default=300, ge=1, description="hard cap on enumerated actions (no_filter)")
    n_examples: int = Field(default=2, ge=0, description="worked examples in the action-selection prompt")
    choice_mode: ChoiceMode = "auto"
    allow_free_answer: bool = True
    fallback_answer: bool = True
    retries: int = Field(default=1, ge=0)
    max_tokens: int = Field(default=160, ge=8)
    oracle_max_nodes: int = Field(default=4000, ge=1)
    no_guidance: bool = False
    no_clustering: bool = False
    no_filter: bool = False
    no_incorrect: bool = False
    allow_memory_overlap: bool = False
    seed: int = 0

    def methodology_variant(self) -> str:
        """Key of the methodology set these ablation flags use (see :class:`ARIMemory`)."""
        return variant_key(clustered=not self.no_clustering, incorrect=not self.no_incorrect)


def variant_key(*, clustered: bool, incorrect: bool) -> str:
    return ("clustered" if clustered else "global") + ("" if incorrect else "-correct-only")
