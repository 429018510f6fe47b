"""TimeR4 (Qian et al., EMNLP 2024): retrieve → rewrite → retrieve → rerank → reason.

Settings, presets and deviations: :mod:`.config` (``preset=paper`` by default; ``report.json`` names the
preset and every deviation in force). The stages:

1. **FKS retrieval** (§4.2): the top ``rewrite_facts`` facts for the question by the untrained encoder
   (``embedder``, the bundled SentenceBERT all-MiniLM-L6-v2), over the whole KG through a persisted FAISS
   index — no entity linking (``scope=kg``, the paper preset; ``scope=entities``/``auto`` are ours, see
   :class:`~.config.Scope`). ``fact_retrieval=false`` is Table 5's "w/o fact retrieval": the stage is
   replaced by entity linking (the linked entities' facts, ranked by BM25), also TKS's candidate set.
2. **Rewrite** (§4.3, Figure 5): every question goes to the rewrite (``rewrite_policy=always``, the paper's
   "ensure that all questions have explicit timestamps"; ``detect`` rewrites only questions with an implicit
   time, :func:`needs_rewrite`). ``rewrite`` (:class:`RewriteMode`): ``llm`` — the paper's LLM rewrite
   from the FKS facts; ``kg`` — offline (ours): the shared :class:`~tkgqa.query.Reasoner` parses the
   reference into ``TimeOf(anchor rows)`` and the executor reads the anchor event's time from the KG (a
   question without such a reference is left as it is); ``auto`` (default) — ``llm`` with an LLM, else
   ``kg``; ``off``. The trace records which ran and the resolved time.
3. **TKS retrieval** (§4.4) with the *rewritten* question by the time-aware retriever: ``tks_embedder=auto``
   uses the model ``tkgqa timer4 train-retriever`` saved for the question's dataset under ``TKGQA_HOME``
   (:func:`tkgqa.retrieval.training.find_trained_retriever`) and says in the trace (and ``report.json``)
   when there is none and the FKS model stands in.
4. **Rerank** (§4.5, Eq. 9–10): ``μ · sim + (1 − μ) · φ_t``, μ = 0.4, over the ``pool_size`` facts TKS
   retrieved, with the constraint the KG rewrite resolved, else the one read from the (rewritten) question.
   φ_t's normaliser ``max(t_q − t)`` runs over the KG's facts (``phi_norm=kg``, §4.5) or over the candidates
   (``pool``, ours). Only questions with a time ``t_q`` are reranked, as in the paper; our first/last
   analogue is ``rerank_extremes=True``. ``proximity=paper`` applies Eq. 9's decay to every before/after
   question; ``ordinal`` (ours) only to first/last ones (see :mod:`tkgqa.retrieval.temporal`).
5. **Reason** (§4.6, Figure 6): the top ``top_k`` = 15 facts; the model lists all possible answers, parsed
   with the safe list parser (never eval).

Ablations (Table 5): ``fact_retrieval=false``, ``rewrite=off``, ``temporal_retrieval=false`` (TKS = FKS),
``rerank=false``; or ``"timer4:no_fact_retrieval,no_rewrite,no_temporal_retrieval,no_rerank"``.

``facts=dataset`` (:mod:`.given_facts`) skips stages 1–4: the answer prompt, as the authors' code renders
it, reads the facts the dataset ships (TimeQuestions' ``retrieved/``). LLM calls are tagged with their
stage (``rewrite``, ``answer``) for the run log and cassettes (``--llm replay:FILE``).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...datasets.base import Question
from ...errors import ConfigError
from ...kg import KGStore
from ...kg.fact import Fact
from ...kg.neighborhood import neighbors
from ...llm import LLMBackend, Usage, answer_usage, llm_context
from ...outcomes import AbstainReason, ResultRow
from ...prompts.ask import Refused, ask
from ...prompts.base import Prompt
from ...query import ParserOptions, QuestionLinker, Reasoner
from ...retrieval import BM25Retriever, Retriever, ScoredFact, TimeConstraint
from ...retrieval.temporal import fuse, time_scores
from ...retrieval.training import find_trained_retriever, trained_retriever_dir, trained_retrievers
from ...time import span_of
from ...trace import TraceStep
from ..base import (
    Answer,
    Method,
    StepEvent,
    StepKind,
    abstain_refused,
    listed_answer,
    missing_llm_error,
    report_step,
)
from .config import (
    SPEC_FLAGS,
    FactSource,
    PhiNorm,
    RewritePolicy,
    Scope,
    TimeR4Config,
    TimeR4Setup,
)
from .given_facts import AUTHORS_REASON_PROMPT, dataset_facts
from .prompts import REASON_PROMPT, REWRITE_PROMPT, quadruple_text
from .rewrite import RewriteAnchor, RewriteMode, RewriteOutcome, check_rewrite, kg_rewrite, needs_rewrite
from .steps import (
    DatasetFactsStep,
    FKSStep,
    LLMRewriteStep,
    ReasonStep,
    RewriteError,
    RewriteSkipped,
    TKSStep,
)

_FAST_EMBEDDERS = ("model2vec", "hashing")


@dataclass(frozen=True)
class RetrievalStages:
    """Ranked facts of each retrieval stage for one question, and the scope they were drawn from.
    ``tks_model``: which time-aware retriever ran (``trained:<path>``, ``fks (untrained: …)``, a name)."""

    fks: list[ScoredFact]
    tks: list[ScoredFact]
    tks_rerank: list[ScoredFact]
    query: str
    scope: str
    n_candidates: int | None
    entities: list[str] = field(default_factory=list)
    tks_model: str = ""


class TimeR4Method(Method):
    """TimeR4. ``llm``: spec or backend (needed by :meth:`answer`, not by :meth:`retrieve`). ``requested``
    is the configuration as given, ``config`` the effective one (the preset's values filled in)."""

    name = "timer4"
    config_class = TimeR4Config
    spec_flags = SPEC_FLAGS
    config: TimeR4Config

    notes: TimeR4Setup

    def setup(self) -> TimeR4Setup:
        self.linker = QuestionLinker()
        self._fks: Retriever | None = None
        self._tks: dict[str, Retriever] = {}
        self._reasoner: Reasoner | None = None
        self._bm25: weakref.WeakKeyDictionary[Any, tuple[int, BM25Retriever]] = weakref.WeakKeyDictionary()
        self._spans: weakref.WeakKeyDictionary[Any, tuple[int, int] | None] = weakref.WeakKeyDictionary()
        kg_rewrite = self.config.rewrite is RewriteMode.AUTO and self.rewrite_mode() is RewriteMode.KG
        return TimeR4Setup(
            tks_trained=bool(trained_retrievers()),
            kg_rewrite=kg_rewrite and self.config.facts is FactSource.RETRIEVE,
        )

    def describe(self) -> dict[str, Any]:
        """:meth:`Method.describe` and the trained time-aware retrievers found under ``TKGQA_HOME``
        (``tks_trained``: dataset → path; which one each question used is in its trace and in
        ``method_metrics``)."""
        return {**super().describe(), "tks_trained": {k: str(v) for k, v in trained_retrievers().items()}}

    def report_metrics(self, rows: Sequence[ResultRow]) -> dict[str, Any]:
        """Counts over an evaluation's rows for ``report.json``: rewritten questions, reranked ones, and the
        time-aware retriever used (trained or the untrained FKS model)."""
        steps = [s for r in rows for s in r.steps()]
        rewrites = [s for s in steps if s.get("step") == "rewrite"]
        tks = [s for s in steps if s.get("step") == "tks"]
        models: dict[str, int] = {}
        for s in tks:
            key = str(s.get("retriever", ""))
            models[key] = models.get(key, 0) + 1
        return {
            "rewritten": sum(1 for s in rewrites if s.get("rewritten") not in (None, s.get("original"))),
            "reranked": sum(1 for s in tks if s.get("time_constraint")),
            "tks_retriever": models,
            "tks_untrained": sum(n for k, n in models.items() if not k.startswith("trained:")),
        }

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
            proximity=cfg.proximity or "ordinal",
        )

    @property
    def fks(self) -> Retriever:
        """The fact retriever (untrained embedder)."""
        if self._fks is None:
            self._fks = self._retriever(self.config.embedder)
        return self._fks

    def _tks_spec(self, key: str) -> tuple[str | None, str]:
        """The embedder TKS uses for dataset ``key`` (``None``: the FKS retriever) and how to name it."""
        cfg = self.config
        spec = cfg.tks_embedder or "fks"
        if not cfg.temporal_retrieval or spec == "fks":
            return None, "fks (temporal_retrieval off)"
        if spec != "auto":
            return spec, spec
        found = find_trained_retriever(key)
        if found is None:
            where = trained_retriever_dir(key)
            return None, f"fks (untrained: no trained retriever at {where})"
        return f"minilm:{found}", f"trained:{found}"

    def tks_for(self, question: Question | str, kg: KGStore) -> tuple[Retriever, str]:
        """The time-aware retriever for ``question`` (the model trained for its dataset when there is one,
        see :class:`~.config.TimeR4Config` ``tks_embedder``) and a note naming it."""
        key = (question.dataset if isinstance(question, Question) else "") or kg.name
        spec, note = self._tks_spec(kg.name if key.startswith("generated:") else key)
        if spec is None:
            return self.fks, note
        if spec not in self._tks:
            self._tks[spec] = self._retriever(spec)
        return self._tks[spec], note

    @property
    def tks(self) -> Retriever:
        """The time-aware retriever for questions without a dataset (see :meth:`tks_for`)."""
        spec, _ = self._tks_spec("")
        if spec is None:
            return self.fks
        if spec not in self._tks:
            self._tks[spec] = self._retriever(spec)
        return self._tks[spec]

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
        mode = Scope(cfg.preset_value("scope"))
        if not cfg.fact_retrieval:
            mode = Scope.ENTITIES  # "w/o fact retrieval": entity linking instead
        elif mode is Scope.AUTO:
            if len(kg) <= cfg.small_kg:
                return list(range(len(self.fks.table(kg)))), "all", []
            fast = self.fks.embedder.name.startswith(_FAST_EMBEDDERS)
            mode = Scope.KG if fast else Scope.ENTITIES
        if mode is Scope.KG:
            return None, "kg", []
        entities = self.linker(question, kg)
        if not entities:
            if not cfg.fact_retrieval:
                return [], "entity-linking (no entity linked)", []
            return self._bm25_top(kg, text, None, cfg.max_candidates), "bm25", []
        around = list(entities)
        if cfg.scope_hops > 1:
            for e in entities:
                around += neighbors(kg, e)[:50]
        ids = self.fks.candidates_around(kg, dict.fromkeys(around))
        name = f"entities-{cfg.scope_hops}hop" if cfg.fact_retrieval else "entity-linking"
        if len(ids) > cfg.max_candidates:
            ids, name = self._bm25_top(kg, text, ids, cfg.max_candidates), name + "+bm25"
        return ids, name, entities

    def _linked_facts(self, text: str, kg: KGStore, ids: list[int] | None, k: int) -> list[ScoredFact]:
        """``fact_retrieval=false``: the linked entities' facts ranked by BM25 (no dense retrieval)."""
        if not ids:
            return []
        table = self.fks.table(kg)
        ranked = self._bm25_top(kg, text, ids, k)
        return [ScoredFact(table.facts[i], 0.0, 0.0, None, i, table.texts[i]) for i in ranked]

    def fks_facts(
        self, question: Question | str, kg: KGStore, ids: list[int] | None, k: int
    ) -> list[ScoredFact]:
        """The FKS stage: the ``k`` facts nearest the original question (or, ``fact_retrieval=false``, the
        linked entities' facts by BM25)."""
        text = question.text if isinstance(question, Question) else question
        if not self.config.fact_retrieval:
            return self._linked_facts(text, kg, ids, k)
        return self.fks.retrieve(text, kg, k, candidate_ids=ids, rerank=False)

    # --- φ_t rerank -----------------------------------------------------------------------------------
    def _kg_span(self, kg: KGStore) -> tuple[int, int] | None:
        if kg not in self._spans:
            first, last = kg.time_span()
            self._spans[kg] = None if first is None or last is None else (first.first_day, last.last_day)
        return self._spans[kg]

    def normaliser(self, constraint: TimeConstraint, kg: KGStore) -> float | None:
        """φ_t's ``max(t_q − t)`` in days: over the KG's facts (``phi_norm=kg``: from ``t_q`` to the KG's
        earliest fact for *before*, to its latest for *after*, the larger of both for *equal*/*in*), or
        ``None`` = over the reranked candidates (``phi_norm=pool``, and first/last)."""
        if PhiNorm(self.config.preset_value("phi_norm")) is PhiNorm.POOL or constraint.time is None:
            return None
        span = self._kg_span(kg)
        if span is None:
            return None
        q0, q1 = span_of(constraint.time)
        lo, hi = span
        match constraint.kind:
            case "before":
                d = q0 - lo
            case "after":
                d = hi - q1
            case _:
                d = max(q0 - lo, hi - q1)
        return float(d) if d > 0 else None

    def rerank(
        self,
        retriever: Retriever,
        query: str,
        pool: list[ScoredFact],
        constraint: TimeConstraint | None,
        kg: KGStore,
    ) -> list[ScoredFact]:
        """Eq. 10 over ``pool`` (TKS's facts, cosine order): ``μ · sim + (1 − μ) · φ_t``."""
        if constraint is None or not pool:
            return pool
        nearest = retriever.proximity.nearest(query)
        phi = time_scores(
            constraint, [s.fact for s in pool], horizon_days=self.normaliser(constraint, kg), nearest=nearest
        )
        sims = np.array([s.sim for s in pool], dtype=np.float64)
        scores = fuse(sims, phi, self.config.mu)
        order = np.argsort(-scores, kind="stable")
        return [replace(pool[j], score=float(scores[j]), time_score=float(phi[j])) for j in order]

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
        fks = self.fks_facts(question, kg, ids, k)
        tks_retriever, note = self.tks_for(question, kg)
        pool = tks_retriever.retrieve(query, kg, max(cfg.pool_size, k), candidate_ids=ids, rerank=False)
        constraint = tks_retriever.resolve_constraint(query, time_constraint or "auto")
        reranked = self.rerank(tks_retriever, query, pool, constraint, kg)
        return RetrievalStages(
            fks, pool[:k], reranked[:k], query, scope, None if ids is None else len(ids), entities, note
        )

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
        return self.fks_facts(question, kg, ids, self.config.rewrite_facts)

    def rewrite(self, question: Question | str, facts: list[ScoredFact], kg: KGStore) -> RewriteOutcome:
        """The rewrite stage (:class:`RewriteMode`): the question TKS retrieves with, the φ_t constraint
        the KG rewrite resolved, a trace step and the usage. ``facts``: FKS facts (the LLM rewrite's)."""
        cfg = self.config
        text = question.text if isinstance(question, Question) else question
        mode = self.rewrite_mode()
        policy = RewritePolicy(cfg.preset_value("rewrite_policy"))
        common = (str(mode), str(policy), text)  # the rewrite step's first fields

        def unchanged(reason: str) -> RewriteOutcome:
            return RewriteOutcome(text, None, None, RewriteSkipped(*common, skipped=reason))

        if mode is RewriteMode.OFF:
            return unchanged("disabled")
        if policy is RewritePolicy.DETECT and not needs_rewrite(text):
            return unchanged("no implicit temporal reference")
        if mode is RewriteMode.KG:
            found, why = kg_rewrite(question, kg, self.reasoner)
            if found is None:
                return unchanged(why)
            return RewriteOutcome(found.text, mode, found.constraint, found.step(*common))
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
        with llm_context(stage=STAGE_REWRITE):
            context = {"question": text, "facts": shown}
            parsed = ask(self.llm, REWRITE_PROMPT, context, window=True, max_tokens=96)
        if isinstance(parsed, Refused):  # keep the question; other LLM errors propagate
            return RewriteOutcome(text, None, None, RewriteError(*common, error=parsed.message), parsed.usage)
        check = check_rewrite(text, parsed.value)
        accepted = check.accepted
        out = parsed.value if accepted else text
        # refused: the original question stays, and the trace says why
        refused = None if accepted else check.reason()
        step = LLMRewriteStep(
            *common, proposed=parsed.value, accepted=accepted, rewritten=out, refused=refused
        )
        return RewriteOutcome(out, mode if accepted else None, None, step, parsed.usage)

    def reason(self, question: Question, kg: KGStore) -> Answer:
        if self.llm is None:
            raise missing_llm_error(self.name)
        if self.config.facts is FactSource.DATASET:
            return self._answer_given(question, kg, self.llm)
        return self._answer(question, kg, self.llm)

    def _answer_given(self, question: Question, kg: KGStore, llm: LLMBackend) -> Answer:
        """``facts=dataset``: the authors' answer prompt over the dataset's facts (:mod:`.given_facts`)."""
        texts, source = dataset_facts(question, kg)
        trace: list[TraceStep] = [DatasetFactsStep(source=source, facts=texts)]
        _stage(0, f"dataset facts ({source}): {len(texts)}", len(texts))
        if not texts:
            return Answer.abstain(
                AbstainReason.NO_FACTS_RETRIEVED.note(), trace, usage=answer_usage(Usage(), llm)
            )
        context = {"question": question.text, "facts": texts}
        evidence = list(question.context or [])
        return self._reason(llm, AUTHORS_REASON_PROMPT, context, evidence, trace, Usage())

    def _reason(
        self,
        llm: LLMBackend,
        prompt: Prompt[list[str]],
        context: dict[str, Any],
        evidence: list[Fact],
        trace: list[TraceStep],
        usage: Usage,
    ) -> Answer:
        """The answer step (§4.6): ``prompt`` over ``context``; ``usage``: what earlier steps spent."""
        with llm_context(stage=STAGE_ANSWER):
            reason = AbstainReason.ANSWER_LIST_UNPARSED
            tokens = self.config.max_tokens
            parsed = ask(llm, prompt, context, reason=reason, spent=usage, max_tokens=tokens)
        usage = usage + parsed.usage
        if isinstance(parsed, Refused):
            return abstain_refused(parsed, trace, usage, llm, entry=("step", "reason"), evidence=evidence)
        trace.append(ReasonStep(answers=parsed.value))
        empty = AbstainReason.MODEL_LISTED_NO_ANSWER.note()
        return listed_answer(parsed.value, parsed.text, trace, usage, llm, empty=empty, evidence=evidence)

    def _answer(self, question: Question, kg: KGStore, llm: LLMBackend) -> Answer:
        cfg = self.config
        ids, scope, entities = self.scope(question, kg)
        fks = self.fks_facts(question, kg, ids, cfg.rewrite_facts)
        outcome = self.rewrite(question, fks, kg)
        query, step, usage = outcome.text, outcome.step, outcome.usage
        trace: list[TraceStep] = [
            FKSStep(
                scope=scope,
                fact_retrieval="dense" if cfg.fact_retrieval else "entity linking (ablation)",
                candidates=None if ids is None else len(ids),
                entities=entities,
                facts=[f.text for f in fks],
            ),
            step,
        ]
        _stage(0, f"FKS ({scope}): {len(fks)} facts", len(fks))
        _stage(1, f"rewrite: {query}" if query != question.text else "rewrite: unchanged", None)
        retriever, note = self.tks_for(question, kg)
        pool = retriever.retrieve(query, kg, max(cfg.pool_size, cfg.top_k), candidate_ids=ids, rerank=False)
        used = retriever.resolve_constraint(query, outcome.constraint or "auto") if cfg.rerank else None
        facts = (self.rerank(retriever, query, pool, used, kg) if cfg.rerank else pool)[: cfg.top_k]
        trace.append(
            TKSStep(
                retriever=note,
                rerank=cfg.rerank,
                time_constraint=None if used is None else str(used),
                phi_norm=str(cfg.preset_value("phi_norm")),
                facts=[f.text for f in facts],
            )
        )
        _stage(2, f"TKS{' + φ_t rerank' if used is not None else ''}: {len(facts)} facts", len(facts))
        if not facts:
            return Answer.abstain(
                AbstainReason.NO_FACTS_RETRIEVED.note(), trace, usage=answer_usage(usage, llm)
            )
        context = {"question": query, "facts": [f.text for f in facts]}
        return self._reason(llm, REASON_PROMPT, context, [f.fact for f in facts], trace, usage)


#: The stage tags of TimeR4's LLM calls (:func:`~tkgqa.llm.llm_context`; the run log, cassettes).
STAGE_REWRITE = "rewrite"
STAGE_ANSWER = "answer"


def _stage(index: int, label: str, count: int | None) -> None:
    report_step(StepEvent(StepKind.STAGE, index, label[:200], count=count))
