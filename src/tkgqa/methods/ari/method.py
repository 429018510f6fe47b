"""``ARIMethod`` (registered as ``"ari"``): link → enumerate/filter → policy loop → answer, with the
methodology of the nearest history cluster injected into the prompt.

The configuration runs under a preset (``paper`` by default, or ``ours``); :meth:`ARIMethod.describe` (what
``report.json`` records) names the preset, the effective settings, every deviation from the paper in force
and the settings the paper leaves open."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ...datasets.base import Question
from ...errors import ConfigError, DataError
from ...kg.base import KGStore
from ...llm import LLMBackend, answer_usage, llm_context
from ...outcomes import AbstainReason
from ...query import Reasoner
from ...query.link import LinkedQuestion, QuestionLinker
from ...retrieval.embedders import Embedder
from ...retrieval.similarity import Similarity
from ...trace import TraceStep
from ..base import Answer, Method, missing_llm_error, options_from
from .agent import Episode, run_episode
from .config import ARIConfig, ARISetup, EmbedderName, embedder_fallback, embedder_kind
from .environment import ARIEnvironment, FilterSettings
from .memory import ARIMemory, HistoryRecord, HistoryStep
from .policies import ActionPromptStyle, LLMPolicy, OraclePolicy, Policy
from .steps import AgentStep, FinalStep, SetupStep

PolicyFactory = Callable[[Question, KGStore], Policy]


class ARIMethod(Method):
    """Abstract Reasoning Induction (Chen et al., 2024) over any :class:`KGStore`.

    ``policy``: ``"llm"`` (needs ``llm``), ``"symbolic"`` (no LLM) or ``"oracle"`` (uses the gold answers:
    the action space's upper bound). A memory (``memory=`` path or :class:`ARIMemory`) supplies
    methodologies; without one (or with ``no_guidance``) the prompt carries none."""

    name = "ari"
    style = ActionPromptStyle()

    config_class = ARIConfig
    spec_positional = "policy"  # "ari:oracle"; "ari:policy=symbolic,no_filter=true,memory=mem.json"
    config: ARIConfig
    requested: ARIConfig

    def __init__(
        self,
        config: ARIConfig | None = None,
        *,
        llm: str | LLMBackend | None = None,
        spec: str | None = None,
        memory: str | ARIMemory | None = None,
        **overrides: Any,
    ) -> None:
        if isinstance(memory, str):
            overrides["memory"] = memory
        self.memory: ARIMemory | None = memory if isinstance(memory, ARIMemory) else None
        super().__init__(config, llm=llm, spec=spec, **overrides)

    notes: ARISetup

    def setup(self) -> ARISetup:
        if self.requested.embedder is not None:
            self.requested.embedder.check_available()
        if self.config.policy == "llm" and self.llm is None:
            raise missing_llm_error("ari", alternative="the offline policy: --method ari:policy=symbolic")
        if self.memory is None and self.config.memory:
            self.memory = ARIMemory.load(self.config.memory)
        self._embedder: Embedder | None = None
        self._embedder_ready = False
        self.linker = QuestionLinker.anchors(self.config.max_entities)
        self._symbolic: Reasoner | None = None
        return self._embedder_notes()

    # --- resources ----------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        if not self._embedder_ready:
            self._embedder = self._resolve_embedder()
            self._embedder_ready = True
        return self._embedder

    def _resolve_embedder(self) -> Embedder | None:
        from .embedding import shared_embedder

        spec = self.config.embedder
        assert isinstance(spec, EmbedderName)
        return shared_embedder(spec)  # errors are raised: never run silently without the embedder

    def _embedder_notes(self) -> ARISetup:
        """With the embedder unset, the kind the memory was clustered with (clusters and questions must be
        embedded alike), and the embedder's fallback (decided from the request); recorded in
        :meth:`describe` and the deviations."""
        settings: dict[str, Any] = {}
        notes: list[str] = []
        memory = self.memory
        if self.requested.embedder is None and memory is not None and memory.embedder_name:
            kind = embedder_kind(memory.embedder_name)
            if kind is not None and kind is not self.config.embedder:
                kind.check_available()
                settings["embedder"] = kind
                notes.append(
                    f"embedder={kind.value}: taken from the memory (clustered with {memory.embedder_name!r})"
                )
        fallback = embedder_fallback(self.requested, self.config.model_copy(update=settings))
        if fallback:
            notes.append(fallback)
        return ARISetup(settings=settings, fallbacks=tuple(notes), embedder_fallback=fallback)

    def describe(self) -> dict[str, Any]:
        """:meth:`Method.describe` and any fallback taken (the embedder: from the memory, or not
        installed)."""
        out = super().describe()
        if self.notes.fallbacks:
            out["fallbacks"] = list(self.notes.fallbacks)
        return out

    def link(self, question: Question, kg: KGStore) -> LinkedQuestion:
        return self.linker.link(question, kg)

    def environment(
        self, question: Question, kg: KGStore, linked: LinkedQuestion | None = None
    ) -> ARIEnvironment:
        linked = linked or self.link(question, kg)
        c = self.config
        assert c.action_space is not None and c.filter_mode is not None
        settings = options_from(FilterSettings, c, enabled=not c.no_filter, mode=c.filter_mode)
        return ARIEnvironment(kg, linked.anchors, Similarity(question.text, self.embedder), settings)

    def make_policy(self, question: Question, kg: KGStore) -> Policy:
        c = self.config
        if c.policy == "oracle":
            return OraclePolicy(c.oracle_max_nodes)
        if c.policy == "symbolic":
            from .symbolic_policy import SymbolicPolicy

            if self._symbolic is None:
                self._symbolic = Reasoner()
            parsed = self._symbolic.parse(question, kg)
            return SymbolicPolicy(parsed.program, reason=parsed.reason, allow_free_answer=c.allow_free_answer)
        assert self.llm is not None
        assert c.choice_mode is not None and c.retries is not None
        return LLMPolicy(
            self.llm,
            choice_mode=c.choice_mode,
            allow_free_answer=c.allow_free_answer,
            retries=c.retries,
            max_tokens=c.max_tokens,
            style=self.prompt_style(),
        )

    def prompt_style(self) -> ActionPromptStyle:
        """The class's prompt style with the config's examples (how many, which set)."""
        assert self.config.n_examples is not None and self.config.examples is not None
        return dataclasses.replace(
            self.style, n_examples=self.config.n_examples, examples=self.config.examples
        )

    def methodology(self, linked: LinkedQuestion) -> tuple[int | None, str | None]:
        """(cluster, text) of the methodology for this question; (None, None) without guidance."""
        if self.config.no_guidance or self.memory is None or self.memory.labels is None:
            return None, None  # no memory, or an online memory not yet clustered
        variant = self.config.methodology_variant()
        if variant not in self.memory.methodologies:
            if self.llm is None:
                raise DataError(
                    f"the ARI memory has no {variant!r} methodologies and no LLM is configured to induce them"
                )
            self.memory.induce(
                self.llm,
                clustered=not self.config.no_clustering,
                incorrect=not self.config.no_incorrect,
                per_kind=self.config.examples_per_kind,
                with_candidates=bool(self.config.induction_candidates),
            )
        embedder = self.embedder
        if embedder is None:
            raise ConfigError("methodology lookup needs an embedder; set embedder='hashing' (no dependency)")
        return self.memory.methodology_for(linked.masked, embedder, variant)

    def _check_overlap(self, question: Question) -> None:
        if self.memory is None or self.config.allow_memory_overlap or self.config.no_guidance:
            return
        if any(r.qid == question.qid and r.question == question.text for r in self.memory.records):
            raise DataError(
                f"question {question.qid!r} is in the ARI history memory: build the memory from other "
                "questions than those evaluated (or set allow_memory_overlap=True)"
            )

    # --- answering ----------------------------------------------------------------------------------
    def episode(
        self, question: Question, kg: KGStore
    ) -> tuple[Episode, LinkedQuestion, int | None, str | None]:
        self._check_overlap(question)
        linked = self.link(question, kg)
        cluster, methodology = self.methodology(linked)
        env = self.environment(question, kg, linked)
        policy = self.make_policy(question, kg)
        ep = run_episode(
            question,
            env,
            policy,
            t_max=self.config.t_max,
            methodology=methodology,
            max_result_items=self.config.max_result_items if self.config.truncate_results else None,
            fallback_answer=bool(self.config.fallback_answer),
        )
        return ep, linked, cluster, methodology

    def reason(self, question: Question, kg: KGStore) -> Answer:
        ep, linked, cluster, methodology = self.episode(question, kg)
        if self.config.online_memory:
            self._remember(question, kg, ep, linked)
        setup = SetupStep(
            self.config.policy,
            list(linked.anchors.entities),
            [t.iso() for t in linked.anchors.times],
            linked.masked,
            cluster,
            methodology,
        )
        trace: list[TraceStep] = [setup, *(AgentStep.of(s) for s in ep.steps)]
        trace.append(FinalStep(ep.stop_reason, ep.forced, ep.n_actions))
        usage = answer_usage(ep.usage, self.llm)
        raw = next((s.raw_output for s in reversed(ep.steps) if s.raw_output), "")
        if not linked.anchors.entities:
            return Answer.abstain(AbstainReason.NO_ENTITY_LINKED.note(), trace=trace, usage=usage)
        if not ep.answers:
            reason = AbstainReason.NO_ANSWER.note(stop=ep.stop_reason)
            return Answer.abstain(reason, trace=trace, usage=usage, raw_output=raw)
        return Answer(ep.answers, evidence=ep.evidence, trace=trace, usage=usage, raw_output=raw)

    def record(self, question: Question, kg: KGStore) -> tuple[HistoryRecord, Answer]:
        """Answer ``question`` and return its history record (correctness against its gold answers)."""
        with llm_context(method=self.name, question_id=question.qid):  # answer()'s context: outside it
            ep, linked, _, _ = self.episode(question, kg)
        usage = answer_usage(ep.usage, self.llm)
        return _history_record(question, kg, ep, linked), Answer(
            ep.answers, evidence=ep.evidence, usage=usage
        )

    def _remember(self, question: Question, kg: KGStore, ep: Episode, linked: LinkedQuestion) -> None:
        """``online_memory`` (Algorithm 1 line 16): the processed question joins H_q; every
        ``online_refresh`` additions the memory is re-clustered and its methodologies re-induced."""
        if self.memory is None:
            self.memory = ARIMemory(n_clusters=self.config.n_clusters, meta={"source": "online"})
        self.memory.add_online(_history_record(question, kg, ep, linked))
        if self.memory.pending < self.config.online_refresh or self.embedder is None:
            return
        c = self.config
        self.memory.refresh(
            self.embedder,
            self.llm,
            variant=(not c.no_clustering, not c.no_incorrect),
            per_kind=c.examples_per_kind,
            with_candidates=bool(c.induction_candidates),
            seed=c.seed,
        )


def _history_record(question: Question, kg: KGStore, ep: Episode, linked: LinkedQuestion) -> HistoryRecord:
    from .gold import answers_correct

    steps = [HistoryStep(candidates=s.candidates, action=s.action, result=s.result) for s in ep.steps]
    return HistoryRecord(
        qid=question.qid,
        question=question.text,
        masked=linked.masked,
        steps=steps,
        answers=ep.answers,
        gold=list(question.answers),
        correct=answers_correct(kg, ep.answers, question.answers),
        qtype=question.qtype,
    )
