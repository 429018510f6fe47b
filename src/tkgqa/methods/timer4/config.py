"""``TimeR4Config``: every setting of TimeR4, its two presets and the deviations from the paper.

``preset=paper`` (the default) runs the configuration of Qian et al., EMNLP 2024 (§4.2–4.6, §5.1) wherever the
paper gives one; ``preset=ours`` switches on the project's variants. A preset-dependent setting left unset
(``None``) takes its preset's value (:data:`PRESETS`); one given explicitly wins.
:meth:`TimeR4Config.effective` resolves them, :meth:`TimeR4Config.deviations` lists what differs from the
paper and :meth:`TimeR4Config.unspecified` what the paper leaves open (our choices in both presets). Both go
into ``report.json`` through :meth:`TimeR4Method.describe` — the same mechanism as every method with a paper.
``docs/timer4_paper_vs_ours.md`` has the table with the measured effect of each variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import Field, field_validator

from ...retrieval.temporal import Proximity
from ..base import NO_NOTES, Preset, PresetConfig, SetupNotes
from ..client import client_option
from .rewrite import RewriteAnchor, RewriteMode


class Scope(StrEnum):
    """Which facts FKS and TKS score. ``kg`` (paper §4.2, "direct fact retrieval … without entity linking"):
    every fact of the KG through a persisted FAISS index; ``entities``: the facts around the linked question
    entities (``scope_hops``), cut to ``max_candidates`` by BM25; ``auto`` (ours): every fact of small KGs,
    the whole KG with a fast embedder (model2vec, hashing), else the entity scope (MiniLM over MultiTQ's
    227k facts takes ~14 min once on 2 cores)."""

    KG = "kg"
    ENTITIES = "entities"
    AUTO = "auto"


class RewritePolicy(StrEnum):
    """Which questions the rewrite sees: ``always`` (paper §4.3: "rewrite the questions to ensure that all
    questions have explicit timestamps"; the prompt itself returns a question it cannot improve
    unchanged) or ``detect`` (ours: only questions whose time is implicit, by :func:`needs_rewrite`)."""

    ALWAYS = "always"
    DETECT = "detect"


class PhiNorm(StrEnum):
    """φ_t's normaliser ``max(t_q − t)`` (Eq. 9). ``kg`` (paper §4.5: "for each quadruple in TKG G … normalize
    the time differences within the range"): the largest distance from ``t_q`` to any fact of the KG on the
    allowed side (from :meth:`KGStore.time_span`); ``pool`` (ours): the largest distance among the reranked
    candidates only. Either way φ_t is *applied* to the ``pool_size`` facts TKS retrieved (Eq. 10 reranks
    "the retrieved facts")."""

    KG = "kg"
    POOL = "pool"


class FactSource(StrEnum):
    """The facts the answer prompt reads. ``retrieve`` (default, the paper's pipeline §4.2–4.5): FKS →
    rewrite → TKS → φ_t rerank over the KG. ``dataset``: the facts the dataset ships with each question
    (TimeQuestions' ``retrieved/``: TimeR4's published retrieval output) and the original question, with
    retrieval and rewrite skipped, in the answer prompt as the authors' code renders it (a Python list of
    "S rel O from Y1 to Y2." strings) — so the authors' recorded replies replay by prompt."""

    RETRIEVE = "retrieve"
    DATASET = "dataset"


FACTS_DATASET_NOTE = (
    "facts=dataset: the answer prompt (as rendered by the authors' code) reads the dataset's own retrieved "
    "facts (TimeQuestions: TimeR4's published retrieval output) with the original question; FKS, rewrite, "
    "TKS and the φ_t rerank are skipped"
)


# Settings whose default depends on the preset (unset = the preset's value).
PRESETS: dict[Preset, dict[str, Any]] = {
    Preset.PAPER: {
        "scope": Scope.KG,
        "rewrite_policy": RewritePolicy.ALWAYS,
        "proximity": Proximity.PAPER,
        "phi_norm": PhiNorm.KG,
    },
    Preset.OURS: {
        "scope": Scope.AUTO,
        "rewrite_policy": RewritePolicy.DETECT,
        "proximity": Proximity.ORDINAL,
        "phi_norm": PhiNorm.POOL,
    },
}

_PAPER_SIDE: dict[str, str] = {
    "scope": "§4.2: direct dense retrieval over every fact of the KG, without entity linking (FAISS)",
    "rewrite_policy": "§4.3: every question is rewritten so that all have explicit timestamps",
    "proximity": "Eq. 9: 1 − |t_q − t| / max(t_q − t) for every before/after question",
    "phi_norm": "§4.5: the time differences normalised over the quadruples of the KG",
}
_OURS_SIDE: dict[str, str] = {
    "scope": "facts around the linked question entities when the embedder is slow (auto) or always",
    "rewrite_policy": "only questions with an implicit time reference are rewritten",
    "proximity": "Eq. 9's nearness ranking only for first/last questions; others: Eq. 9's filter alone",
    "phi_norm": "the normaliser is the largest distance among the reranked candidates",
}


class TimeR4Config(PresetConfig):
    """TimeR4 settings. From the paper: ``top_k`` (15 facts, §5.4.2), ``mu`` (μ = 0.4), the SentenceBERT
    encoders (``embedder`` = the bundled all-MiniLM-L6-v2), the LLM rewrite (``rewrite=auto`` = the LLM when
    there is one). ``preset`` (``paper`` default, or ``ours``) fills every setting left unset (``None``):
    :class:`Scope`, :class:`RewritePolicy`, :class:`~tkgqa.retrieval.temporal.Proximity`, :class:`PhiNorm`.

    ``tks_embedder``: ``auto`` (default) — the retriever trained by ``tkgqa timer4 train-retriever`` for the
    question's dataset when one is saved under ``TKGQA_HOME``, else the FKS model (said in the trace and
    ``report.json``); ``fks`` — the FKS model (Table 5 "w/o temporal retrieval" is
    ``temporal_retrieval=false``); any embedder name or saved-model path. ``fact_retrieval=false`` is Table
    5's "w/o fact retrieval": the FKS stage replaced by entity linking (the facts of the linked entities,
    ranked by BM25), which is also TKS's candidate set. Ablations: ``rewrite=off``, ``temporal_retrieval``,
    ``rerank``; spec flags ``timer4:no_rewrite,no_rerank,no_fact_retrieval``. ``facts``
    (:class:`FactSource`): ``retrieve`` (default) or ``dataset`` (answer over the dataset's own facts)."""

    preset_table: ClassVar[Mapping[Preset, Mapping[str, Any]]] = PRESETS
    paper_side: ClassVar[Mapping[str, str]] = _PAPER_SIDE
    ours_side: ClassVar[Mapping[str, str]] = _OURS_SIDE

    preset: Preset = Preset.PAPER
    llm: str | None = Field(
        default=None, description="LLM spec (rewrite and answer), e.g. 'llamacpp:smollm2'"
    )
    embedder: str = "minilm"
    tks_embedder: str | None = "auto"
    scope: Scope | None = None
    scope_hops: int = Field(default=1, ge=1, le=2)
    small_kg: int = Field(default=5000, ge=0)
    max_candidates: int = Field(default=5000, ge=1)
    rewrite_facts: int = Field(default=10, ge=1)
    top_k: int = client_option(15, ge=1, le=1000)
    pool_size: int = Field(default=100, ge=1)
    mu: float = Field(default=0.4, ge=0.0, le=1.0)
    rewrite: RewriteMode = RewriteMode.AUTO
    rewrite_policy: RewritePolicy | None = None
    rewrite_anchor: RewriteAnchor = RewriteAnchor.ANY
    fact_retrieval: bool = True
    temporal_retrieval: bool = True
    rerank: bool = True
    rerank_extremes: bool = False
    proximity: Proximity | None = None
    phi_norm: PhiNorm | None = None
    hybrid: bool = False
    cache_embeddings: bool = True
    max_tokens: int = client_option(256, ge=16, le=32_768)
    facts: FactSource = FactSource.RETRIEVE

    @field_validator("rewrite", mode="before")
    @classmethod
    def _rewrite_mode(cls, value: object) -> RewriteMode:
        return RewriteMode.parse(value)  # True/False (the former boolean setting) read as auto/off

    paper_values: ClassVar[Mapping[str, Any]] = {"top_k": 15, "mu": 0.4}

    def deviations(self, notes: SetupNotes = NO_NOTES) -> list[str]:
        """``facts=dataset`` runs no retrieval and no rewrite: its note alone. ``notes``
        (:class:`TimeR4Setup`): whether a trained time-aware retriever was found, and whether
        ``rewrite=auto`` fell back to the offline KG rewrite for want of an LLM."""
        setup = notes if isinstance(notes, TimeR4Setup) else TimeR4Setup()
        if self.facts is FactSource.DATASET:
            out = [FACTS_DATASET_NOTE]
        else:
            out = self._retrieval_deviations(setup.tks_trained)
        if setup.kg_rewrite:
            out.append("rewrite=auto without an LLM: the offline KG rewrite (ours; paper: the LLM, Fig. 5)")
        return out

    def _retrieval_deviations(self, tks_trained: bool | None) -> list[str]:
        """The settings of fact retrieval, rewrite and rerank that differ from the paper; ``tks_trained``:
        whether any trained time-aware retriever was found (``None``: not looked)."""
        out = self.preset_deviations()
        if not self.fact_retrieval:
            out.append(
                "fact_retrieval=false: entity linking instead of the fact retriever "
                "(Table 5 'w/o fact retrieval')"
            )
        if self.rewrite is RewriteMode.OFF:
            out.append("rewrite=off: no rewrite (Table 5 'w/o rewrite')")
        elif self.rewrite is RewriteMode.KG:
            out.append("rewrite=kg: implicit times resolved offline through the KG (paper: the LLM, Fig. 5)")
        if not self.temporal_retrieval or (self.tks_embedder or "fks") == "fks":
            out.append("TKS = the fact retriever (Table 5 'w/o temporal retrieval')")
        elif self.tks_embedder == "auto":
            out.append(TKS_UNTRAINED if tks_trained is False else TKS_PARTLY)
        if not self.rerank:
            out.append("rerank=false: no φ_t rerank (Table 5 'w/o rerank')")
        if self.rerank_extremes:
            out.append(
                "rerank_extremes=true: first/last questions without a t_q reranked by our φ_t analogue "
                "(paper: only questions with a time are reranked)"
            )
        if self.hybrid:
            out.append("hybrid=true: BM25 fused with the dense ranking by RRF (paper: dense only)")
        out += self.paper_value_deviations()
        return out

    def unspecified(self) -> list[str]:
        return [
            f"rewrite_facts={self.rewrite_facts}: FKS facts shown to the rewrite prompt",
            f"pool_size={self.pool_size}: facts TKS retrieves and φ_t reranks "
            "(Eq. 10: 'the retrieved facts')",
            "φ_t for 'equal'/'in' questions (ours): 1 inside t_q, decaying linearly with the distance "
            "outside, never the −100 filter; 'after' mirrors Eq. 9 (the paper prints only 'before')",
            "φ_t for first/last questions without t_q (ours, off unless rerank_extremes): nearness to the "
            "earliest/latest candidate",
            "facts verbalised as 'S relation O on/from T' (the paper: 'natural language sequences', no "
            "template)",
            "the trained retriever's pairs: gold facts mined from train/dev questions (TimeQuestions dev) or "
            "KG-generated questions (MultiTQ: the shared copy has no train split with answers)",
        ]


TKS_UNTRAINED = (
    "tks_embedder=auto and no trained retriever under TKGQA_HOME: TKS uses the untrained FKS model (paper "
    "§4.4: a SentenceBERT fine-tuned for 10 epochs; run `tkgqa timer4 train-retriever`)"
)
TKS_PARTLY = (
    "tks_embedder=auto: a dataset without a trained retriever under TKGQA_HOME uses the untrained FKS model "
    "for TKS (each question's trace and method_metrics say which ran)"
)


@dataclass(frozen=True)
class TimeR4Setup(SetupNotes):
    """TimeR4's setup notes: whether any trained time-aware retriever was found under ``TKGQA_HOME``
    (``None``: not looked) and whether ``rewrite=auto`` runs the offline KG rewrite (no LLM, facts
    retrieved)."""

    tks_trained: bool | None = None
    kg_rewrite: bool = False


#: Bare words of ``"timer4:…"`` (``"timer4:no_rewrite,no_rerank"``): the presets and the ablations.
SPEC_FLAGS: dict[str, tuple[str, Any]] = {
    "no_fact_retrieval": ("fact_retrieval", False),
    "wo_fact_retrieval": ("fact_retrieval", False),
    "no_rewrite": ("rewrite", RewriteMode.OFF),
    "wo_rewrite": ("rewrite", RewriteMode.OFF),
    "kg_rewrite": ("rewrite", RewriteMode.KG),
    "llm_rewrite": ("rewrite", RewriteMode.LLM),
    "no_temporal_retrieval": ("temporal_retrieval", False),
    "wo_temporal_retrieval": ("temporal_retrieval", False),
    "no_rerank": ("rerank", False),
    "wo_rerank": ("rerank", False),
    "always_rewrite": ("rewrite_policy", RewritePolicy.ALWAYS),
    "detect_rewrite": ("rewrite_policy", RewritePolicy.DETECT),
    "hybrid": ("hybrid", True),
    "rerank_extremes": ("rerank_extremes", True),
}
