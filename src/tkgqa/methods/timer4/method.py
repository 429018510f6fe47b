"""TimeR4 (Qian et al., EMNLP 2024): retrieve → rewrite → retrieve → rerank → reason.

1. **FKS retrieval** (§4.2): the top ``rewrite_facts`` facts for the question by the untrained embedder.
2. **Rewrite** (§4.3, Figure 5): an implicit temporal reference ("after the Danish ministry [visited
   Iraq]") is replaced by an explicit time; questions without one stay unchanged (:mod:`.rewrite`).
   ``rewrite`` (:class:`RewriteMode`): ``llm`` — the paper's LLM rewrite from those facts; ``kg`` — offline:
   the shared :class:`~tkgqa.query.Reasoner` parses the reference into ``TimeOf(anchor rows)`` and the
   executor reads the anchor event's time from the KG; ``auto`` (default) — ``llm`` when the method has an
   LLM, else ``kg``; ``off``. The trace records which ran and the resolved time.
3. **TKS retrieval** (§4.4) with the *rewritten* question (the reference code retrieves with the original
   one; we follow the paper) by the time-aware retriever (``tks_embedder``, e.g. a model trained with
   :func:`tkgqa.retrieval.train_time_aware_retriever`; the FKS embedder when none is given).
4. **Rerank** (§4.5, Eq. 9–10): ``μ · sim + (1 − μ) · φ_t``, μ = 0.4, with the constraint the KG rewrite
   resolved (relation and time, at the anchor's granularity), else the one read from the (rewritten)
   question. As in the paper, only questions with a time ``t_q`` are reranked; our first/last analogue
   for questions without one is ``rerank_extremes=True`` (off: it ranks the whole-KG pool by date alone
   and lowered MultiTQ coverage). ``proximity=ordinal`` (default) ranks before/after facts by nearness to
   ``t_q`` (Eq. 9's decay) only for first/last questions and keeps Eq. 9's filter alone for the others;
   ``proximity=paper`` is Eq. 9 for all (see :mod:`tkgqa.retrieval.temporal`).
5. **Reason** (§4.6, Figure 6): the top ``top_k`` = 15 facts; the model lists all possible answers, parsed
   with the safe list parser (never eval).

Retrieval scope (``scope``): ``"kg"`` scores the whole KG through a persisted vector index; ``"entities"``
scores only the facts around the question's linked entities (``scope_hops`` = 1 or 2), cut to
``max_candidates`` by BM25 when larger (and BM25 over the whole KG when no entity is linked); ``"auto"``
scores every fact of small KGs (≤ ``small_kg`` facts, e.g. TimeQuestions' per-question facts), the whole
KG with a fast embedder (model2vec, hashing) and the entity scope with MiniLM (embedding MultiTQ's 227k
facts takes ~14 min on 2 cores). Ablations (Table 5): ``rewrite=off`` (``False`` is read as ``off``),
``temporal_retrieval=False`` (TKS = FKS retriever), ``rerank=False``; or ``"timer4:no_rewrite,no_rerank"``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, field_validator

from ...datasets.base import Question
from ...errors import ConfigError, ContextWindowError, LLMError, ParseError
from ...kg import KGStore
from ...kg.neighborhood import neighbors
from ...llm import LLMBackend, charge, error_usage, llm_context, resolve_llm_arg, usage_dict
from ...prompts.base import run_prompt
from ...prompts.timer4 import REASON_PROMPT, REWRITE_PROMPT, quadruple_text
from ...query import ParserOptions, QuestionEntities, Reasoner
from ...retrieval import BM25Retriever, Retriever, ScoredFact, TimeConstraint
from ...retrieval.temporal import Proximity
from ..base import METHODS, Answer, Method, MethodConfig, merge_config, parse_options
from .rewrite import RewriteAnchor, RewriteMode, RewriteOutcome, accept_rewrite, kg_rewrite, needs_rewrite

_FAST_EMBEDDERS = ("model2vec", "hashing")


class TimeR4Config(MethodConfig):
    """TimeR4 settings (paper defaults: 15 facts, μ = 0.4); see the module docstring."""

    embedder: str = "minilm"
    tks_embedder: str | None = None
    scope: Literal["auto", "entities", "kg"] = "auto"
    scope_hops: int = Field(default=1, ge=1, le=2)
    small_kg: int = Field(default=5000, ge=0)
    max_candidates: int = Field(default=5000, ge=1)
    rewrite_facts: int = Field(default=10, ge=1)
    top_k: int = Field(default=15, ge=1)
    pool_size: int = Field(default=100, ge=1)
    mu: float = Field(default=0.4, ge=0.0, le=1.0)
    rewrite: RewriteMode = RewriteMode.AUTO
    rewrite_policy: Literal["detect", "always"] = "detect"
    rewrite_anchor: RewriteAnchor = RewriteAnchor.ANY
    temporal_retrieval: bool = True
    rerank: bool = True
    rerank_extremes: bool = False
    proximity: Proximity = Proximity.ORDINAL
    hybrid: bool = False
    cache_embeddings: bool = True
    max_tokens: int = Field(default=256, ge=16)

    @field_validator("rewrite", mode="before")
    @classmethod
    def _rewrite_mode(cls, value: object) -> RewriteMode:
        return RewriteMode.parse(value)  # True/False (the former boolean setting) read as auto/off


@dataclass(frozen=True)
class RetrievalStages:
    """Ranked facts of each retrieval stage for one question, and the scope they were drawn from."""

    fks: list[ScoredFact]
    tks: list[ScoredFact]
    tks_rerank: list[ScoredFact]
    query: str
    scope: str
    n_candidates: int | None
    entities: list[str] = field(default_factory=list)


@METHODS.register("timer4")
class TimeR4(Method):
    """TimeR4. ``llm``: spec or backend (needed by :meth:`answer`, not by :meth:`retrieve`)."""

    name = "timer4"

    def __init__(
        self,
        llm: str | LLMBackend | None = None,
        config: TimeR4Config | None = None,
        spec: str | None = None,
        **overrides: Any,
    ) -> None:
        updates = {**parse_options(spec, method="timer4", flags=_SPEC_FLAGS), **overrides}
        self.config: TimeR4Config = merge_config(TimeR4Config, config, updates)
        self.llm = resolve_llm_arg(llm)
        self.linker = QuestionEntities()
        self._fks: Retriever | None = None
        self._tks: Retriever | None = None
        self._reasoner: Reasoner | None = None
        self._bm25: weakref.WeakKeyDictionary[Any, tuple[int, BM25Retriever]] = weakref.WeakKeyDictionary()

    def describe(self) -> dict[str, Any]:
        llm = None if self.llm is None else getattr(self.llm, "cache_namespace", lambda: None)()
        return {**super().describe(), "llm": llm}

    # --- retrievers -------------------------------------------------------------------------------
    def _retriever(self, embedder: str) -> Retriever:
        cfg = self.config
        return Retriever(
            embedder,
            cache=cfg.cache_embeddings,
            mu=cfg.mu,
            pool_size=cfg.pool_size,
            hybrid=cfg.hybrid,
            rerank_extremes=cfg.rerank_extremes,
            proximity=cfg.proximity,
        )

    @property
    def fks(self) -> Retriever:
        """The fact retriever (untrained embedder)."""
        if self._fks is None:
            self._fks = self._retriever(self.config.embedder)
        return self._fks

    @property
    def tks(self) -> Retriever:
        """The time-aware retriever (``tks_embedder``; the FKS one when absent or ablated)."""
        cfg = self.config
        if not cfg.temporal_retrieval or not cfg.tks_embedder:
            return self.fks
        if self._tks is None:
            self._tks = self._retriever(cfg.tks_embedder)
        return self._tks

    # --- scope ------------------------------------------------------------------------------------
    def _bm25_top(self, kg: KGStore, text: str, ids: list[int] | None, k: int) -> list[int]:
        table = self.fks.table(kg)
        if ids is None:
            cached = self._bm25.get(kg)
            if cached is None or cached[0] != len(table):
                cached = (len(table), BM25Retriever(table.texts))
                self._bm25[kg] = cached
            found, _ = cached[1].search(text, k)
            return [int(i) for i in found]
        local, _ = BM25Retriever([table.texts[i] for i in ids]).search(text, k)
        return [ids[int(i)] for i in local]

    def scope(self, question: Question | str, kg: KGStore) -> tuple[list[int] | None, str, list[str]]:
        """Candidate fact ids (``None`` = the whole KG index), the scope's name and the linked entities."""
        cfg = self.config
        text = question.text if isinstance(question, Question) else question
        mode = cfg.scope
        if mode == "auto":
            if len(kg) <= cfg.small_kg:
                return list(range(len(self.fks.table(kg)))), "all", []
            fast = self.fks.embedder.name.startswith(_FAST_EMBEDDERS)
            mode = "kg" if fast else "entities"
        if mode == "kg":
            return None, "kg", []
        entities = self.linker(question, kg)
        if not entities:
            return self._bm25_top(kg, text, None, cfg.max_candidates), "bm25", []
        around = list(entities)
        if cfg.scope_hops > 1:
            for e in entities:
                around += neighbors(kg, e)[:50]
        ids = self.fks.candidates_around(kg, dict.fromkeys(around))
        name = f"entities-{cfg.scope_hops}hop"
        if len(ids) > cfg.max_candidates:
            ids, name = self._bm25_top(kg, text, ids, cfg.max_candidates), name + "+bm25"
        return ids, name, entities

    # --- pipeline ---------------------------------------------------------------------------------
    def retrieve(
        self,
        question: Question | str,
        kg: KGStore,
        *,
        rewritten: str | None = None,
        k: int | None = None,
        time_constraint: TimeConstraint | None = None,
    ) -> RetrievalStages:
        """FKS (original question), TKS and TKS + φ_t rerank (``rewritten`` question, if given). The rerank
        uses ``time_constraint`` (e.g. :attr:`RewriteOutcome.constraint`), else reads one from the query."""
        cfg = self.config
        text = question.text if isinstance(question, Question) else question
        k = k or max(cfg.top_k, cfg.rewrite_facts)
        ids, scope, entities = self.scope(question, kg)
        query = rewritten or text
        fks = self.fks.retrieve(text, kg, k, candidate_ids=ids, rerank=False)
        tks = self.tks.retrieve(query, kg, k, candidate_ids=ids, rerank=False)
        constraint: TimeConstraint | str = time_constraint or "auto"
        reranked = self.tks.retrieve(query, kg, k, candidate_ids=ids, time_constraint=constraint, rerank=True)
        return RetrievalStages(fks, tks, reranked, query, scope, None if ids is None else len(ids), entities)

    def rewrite_mode(self) -> RewriteMode:
        """The rewrite that runs: ``auto`` resolved to ``llm`` (with an LLM) or ``kg``."""
        mode = self.config.rewrite
        if mode is RewriteMode.AUTO:
            return RewriteMode.LLM if self.llm is not None else RewriteMode.KG
        return mode

    @property
    def reasoner(self) -> Reasoner:
        """The shared offline reasoner behind the KG rewrite (built on first use)."""
        if self._reasoner is None:
            relax = self.config.rewrite_anchor is RewriteAnchor.ANY
            self._reasoner = Reasoner(ParserOptions(any_relation=relax))
        return self._reasoner

    def rewrite_facts(self, question: Question | str, kg: KGStore, ids: list[int] | None) -> list[ScoredFact]:
        """The FKS facts the LLM rewrite reads (none for the other modes, which do not use them)."""
        if self.rewrite_mode() is not RewriteMode.LLM:
            return []
        text = question.text if isinstance(question, Question) else question
        return self.fks.retrieve(text, kg, self.config.rewrite_facts, candidate_ids=ids, rerank=False)

    def rewrite(self, question: Question | str, facts: list[ScoredFact], kg: KGStore) -> RewriteOutcome:
        """The rewrite stage (:class:`RewriteMode`): the question TKS retrieves with, the φ_t constraint
        the KG rewrite resolved, a trace step and the usage. ``facts``: FKS facts (the LLM rewrite's)."""
        cfg = self.config
        text = question.text if isinstance(question, Question) else question
        mode = self.rewrite_mode()
        step: dict[str, Any] = {"step": "rewrite", "mode": str(mode), "original": text}

        def unchanged(reason: str) -> RewriteOutcome:
            return RewriteOutcome(text, None, None, {**step, "skipped": reason})

        if mode is RewriteMode.OFF:
            return unchanged("disabled")
        if cfg.rewrite_policy == "detect" and not needs_rewrite(text):
            return unchanged("no implicit temporal reference")
        if mode is RewriteMode.KG:
            found, why = kg_rewrite(question, kg, self.reasoner)
            if found is None:
                return unchanged(why)
            return RewriteOutcome(found.text, mode, found.constraint, {**step, **found.trace()})
        if self.llm is None:
            raise ConfigError(
                "timer4 rewrite=llm needs an LLM (--llm); use rewrite=kg or auto to rewrite offline"
            )
        shown = [
            quadruple_text(
                [
                    kg.label(f.fact.subject),
                    kg.label(f.fact.relation),
                    kg.label(f.fact.object),
                    f.fact.time_text(),
                ]
            )
            for f in facts[: cfg.rewrite_facts]
        ]
        try:
            parsed = run_prompt(self.llm, REWRITE_PROMPT, {"question": text, "facts": shown}, max_tokens=96)
        except (ParseError, ContextWindowError) as exc:  # keep the question; other LLM errors propagate
            return RewriteOutcome(text, None, None, {**step, "error": str(exc)[:300]}, error_usage(exc))
        accepted = accept_rewrite(text, parsed.value)
        out = parsed.value if accepted else text
        trace = {**step, "proposed": parsed.value, "accepted": accepted, "rewritten": out}
        return RewriteOutcome(out, mode if accepted else None, None, trace, parsed.usage)

    def answer(self, question: Question, kg: KGStore) -> Answer:
        if self.llm is None:
            raise ConfigError(
                "the timer4 method needs an LLM: pass llm='openai:…' / 'llamacpp:smollm2' (--llm)"
            )
        with llm_context(method=self.name, question_id=question.qid):
            return self._answer(question, kg, self.llm)

    def _answer(self, question: Question, kg: KGStore, llm: LLMBackend) -> Answer:
        cfg = self.config
        ids, scope, entities = self.scope(question, kg)
        fks = self.fks.retrieve(question.text, kg, cfg.rewrite_facts, candidate_ids=ids, rerank=False)
        outcome = self.rewrite(question, fks, kg)
        query, step, usage = outcome.text, outcome.step, outcome.usage
        trace: list[dict[str, Any]] = [
            {
                "step": "fks",
                "scope": scope,
                "candidates": None if ids is None else len(ids),
                "entities": entities,
                "facts": [f.text for f in fks],
            },
            step,
        ]
        constraint: TimeConstraint | str | None = (outcome.constraint or "auto") if cfg.rerank else None
        facts = self.tks.retrieve(
            query, kg, cfg.top_k, candidate_ids=ids, time_constraint=constraint, rerank=cfg.rerank
        )
        used = self.tks.resolve_constraint(query, constraint) if cfg.rerank else None
        trace.append(
            {
                "step": "tks",
                "rerank": cfg.rerank,
                "time_constraint": None if used is None else str(used),
                "facts": [f.text for f in facts],
            }
        )
        if not facts:
            return Answer.abstain("no facts retrieved", trace, usage=usage_dict(usage, llm))
        context = {"question": query, "facts": [f.text for f in facts]}
        evidence = [f.fact for f in facts]
        try:
            parsed = run_prompt(llm, REASON_PROMPT, context, max_tokens=cfg.max_tokens)
        except LLMError as exc:  # the backend failed: an error, carrying the rewrite step's usage
            charge(exc, usage)
            raise
        except ParseError as exc:
            usage = usage + error_usage(exc)
            trace.append({"step": "reason", "error": str(exc)[:300]})
            return Answer.abstain(
                "could not parse the answer list",
                trace,
                usage=usage_dict(usage, llm),
                raw_output=exc.raw,
                evidence=evidence,
            )
        usage = usage + parsed.usage
        trace.append({"step": "reason", "answers": parsed.value})
        if not parsed.value:
            return Answer.abstain(
                "the model listed no answer",
                trace,
                usage=usage_dict(usage, llm),
                raw_output=parsed.text,
                evidence=evidence,
            )
        return Answer(parsed.value, evidence, trace, usage_dict(usage, llm), raw_output=parsed.text)


_SPEC_FLAGS: dict[str, tuple[str, Any]] = {
    "no_rewrite": ("rewrite", RewriteMode.OFF),
    "wo_rewrite": ("rewrite", RewriteMode.OFF),
    "kg_rewrite": ("rewrite", RewriteMode.KG),
    "llm_rewrite": ("rewrite", RewriteMode.LLM),
    "no_temporal_retrieval": ("temporal_retrieval", False),
    "wo_temporal_retrieval": ("temporal_retrieval", False),
    "no_rerank": ("rerank", False),
    "wo_rerank": ("rerank", False),
    "always_rewrite": ("rewrite_policy", "always"),
    "hybrid": ("hybrid", True),
    "rerank_extremes": ("rerank_extremes", True),
}
