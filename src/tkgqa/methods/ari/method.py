"""``ARIMethod`` (registered as ``"ari"``): link → enumerate/filter → policy loop → answer, with the
methodology of the nearest history cluster injected into the prompt."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ...datasets.base import Question
from ...errors import ConfigError, DataError
from ...kg.base import KGStore
from ...llm.base import LLMBackend, Usage
from ...llm.cache import llm_context, price_for
from ...retrieval.embedders import Embedder
from ..base import METHODS, Answer, Method, merge_config, parse_options
from .agent import Episode, run_episode
from .config import ARIConfig
from .environment import ARIEnvironment, FilterSettings, Similarity
from .linking import LinkedQuestion, QuestionLinker
from .memory import ARIMemory, HistoryRecord, HistoryStep
from .policies import LLMPolicy, OraclePolicy, Policy, PromptStyle

PolicyFactory = Callable[[Question, KGStore], Policy]


def resolve_llm_arg(llm: str | LLMBackend | None) -> LLMBackend | None:
    """A spec string is resolved (cached + logged); a backend instance is used as given."""
    if llm is None or isinstance(llm, LLMBackend):
        return llm
    from ...llm.base import resolve_llm

    return resolve_llm(llm)


def parse_spec(spec: str) -> dict[str, Any]:
    """``"oracle"`` → ``{"policy": "oracle"}``; ``"a=1,b=x"`` → ``{"a": "1", "b": "x"}`` (validated later)."""
    return parse_options(spec, method="ari", positional="policy")


def usage_dict(usage: Usage, model: str = "") -> dict[str, float]:
    price_in, price_out = price_for(model) if model else (0.0, 0.0)
    return {
        "llm_calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "parse_failures": usage.parse_failures,
        "cost_usd": (usage.prompt_tokens * price_in + usage.completion_tokens * price_out) / 1e6,
    }


@METHODS.register("ari")
class ARIMethod(Method):
    """Abstract Reasoning Induction (Chen et al., 2024) over any :class:`KGStore`.

    ``policy``: ``"llm"`` (needs ``llm``), ``"symbolic"`` (no LLM) or ``"oracle"`` (uses the gold answers:
    the action space's upper bound). A memory (``memory=`` path or :class:`ARIMemory`) supplies
    methodologies; without one (or with ``no_guidance``) the prompt carries none."""

    name = "ari"
    style = PromptStyle()

    def __init__(
        self,
        config: ARIConfig | None = None,
        *,
        llm: str | LLMBackend | None = None,
        memory: str | ARIMemory | None = None,
        spec: str | None = None,
        **overrides: Any,
    ) -> None:
        base = config or ARIConfig()
        if spec:  # "ari:oracle" or "ari:policy=symbolic,no_filter=true,memory=mem.json"
            overrides = {**parse_spec(spec), **overrides}
        if isinstance(llm, str):
            overrides["llm"] = llm
        elif llm is not None:
            overrides["llm"] = f"{llm.name}:{llm.model_id}"
        if isinstance(memory, str):
            overrides["memory"] = memory
        self.config: ARIConfig = merge_config(ARIConfig, base, overrides)
        self.llm = llm if isinstance(llm, LLMBackend) else resolve_llm_arg(self.config.llm)
        if self.config.policy == "llm" and self.llm is None:
            raise ConfigError(
                "ARI with policy 'llm' needs an LLM: pass llm='llamacpp:smollm2' (or policy='symbolic')"
            )
        self.memory: ARIMemory | None = memory if isinstance(memory, ARIMemory) else None
        if self.memory is None and self.config.memory:
            self.memory = ARIMemory.load(self.config.memory)
        self._embedder: Embedder | None = None
        self._embedder_ready = False
        self._linkers: OrderedDict[int, tuple[KGStore, QuestionLinker]] = OrderedDict()
        self._symbolic: Any = None

    # --- resources ----------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        if not self._embedder_ready:
            self._embedder = self._resolve_embedder()
            self._embedder_ready = True
        return self._embedder

    def _resolve_embedder(self) -> Embedder | None:
        spec = self.config.embedder
        if spec == "lexical":
            return None
        from ...retrieval.embedders import resolve_embedder

        try:
            return resolve_embedder(spec)
        except (ImportError, ConfigError):
            return None

    def linker(self, kg: KGStore) -> QuestionLinker:
        key = id(kg)
        found = self._linkers.get(key)
        if found is not None and found[0] is kg:
            return found[1]
        linker = QuestionLinker(kg, self.config.max_entities)
        self._linkers[key] = (kg, linker)
        while len(self._linkers) > 4:
            self._linkers.popitem(last=False)
        return linker

    def environment(
        self, question: Question, kg: KGStore, linked: LinkedQuestion | None = None
    ) -> ARIEnvironment:
        linked = linked or self.linker(kg).link(question)
        c = self.config
        settings = FilterSettings(
            enabled=not c.no_filter,
            top_k=c.top_k,
            max_candidates=c.max_candidates,
            n_answer_entities=c.n_answer_entities,
            n_answer_times=c.n_answer_times,
        )
        return ARIEnvironment(kg, linked.anchors, Similarity(question.text, self.embedder), settings)

    def make_policy(self, question: Question, kg: KGStore) -> Policy:
        c = self.config
        if c.policy == "oracle":
            return OraclePolicy(c.oracle_max_nodes)
        if c.policy == "symbolic":
            from .symbolic_policy import SymbolicPolicy

            if self._symbolic is None:
                from ..symbolic import SymbolicReasoner

                self._symbolic = SymbolicReasoner()
            parsed = self._symbolic.parse(question, kg)
            return SymbolicPolicy(parsed.program, reason=parsed.reason, allow_free_answer=c.allow_free_answer)
        assert self.llm is not None
        style = PromptStyle(
            n_examples=c.n_examples,
            reasons_in_examples=self.style.reasons_in_examples,
            react=self.style.react,
            show_candidates=self.style.show_candidates,
        )
        return LLMPolicy(
            self.llm,
            choice_mode=c.choice_mode,
            allow_free_answer=c.allow_free_answer,
            retries=c.retries,
            max_tokens=c.max_tokens,
            style=style,
        )

    def methodology(self, linked: LinkedQuestion) -> tuple[int | None, str | None]:
        """(cluster, text) of the methodology for this question; (None, None) without guidance."""
        if self.config.no_guidance or self.memory is None:
            return None, None
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
        linked = self.linker(kg).link(question)
        cluster, methodology = self.methodology(linked)
        env = self.environment(question, kg, linked)
        policy = self.make_policy(question, kg)
        with llm_context(method=self.name, question_id=question.qid):
            ep = run_episode(
                question,
                env,
                policy,
                t_max=self.config.t_max,
                methodology=methodology,
                max_result_items=self.config.max_result_items,
                fallback_answer=self.config.fallback_answer,
            )
        return ep, linked, cluster, methodology

    def answer(self, question: Question, kg: KGStore) -> Answer:
        ep, linked, cluster, methodology = self.episode(question, kg)
        setup: dict[str, Any] = {
            "type": "setup",
            "policy": self.config.policy,
            "entities": list(linked.anchors.entities),
            "times": [t.iso() for t in linked.anchors.times],
            "masked_question": linked.masked,
        }
        if cluster is not None:
            setup["cluster"] = cluster
            setup["methodology"] = methodology
        trace = [setup, *({"type": "step", **s.to_dict()} for s in ep.steps)]
        trace.append(
            {"type": "final", "stop": ep.stop_reason, "forced": ep.forced, "n_actions": ep.n_actions}
        )
        usage = usage_dict(ep.usage, self.llm.model_id if self.llm is not None else "")
        raw = next((s.raw_output for s in reversed(ep.steps) if s.raw_output), "")
        if not linked.anchors.entities:
            return Answer.abstain("no KG entity linked in the question", trace=trace, usage=usage)
        if not ep.answers:
            return Answer.abstain(f"no answer ({ep.stop_reason})", trace=trace, usage=usage, raw_output=raw)
        return Answer(ep.answers, evidence=ep.evidence, trace=trace, usage=usage, raw_output=raw)

    def record(self, question: Question, kg: KGStore) -> tuple[HistoryRecord, Answer]:
        """Answer ``question`` and return its history record (correctness against its gold answers)."""
        from .gold import answers_correct

        ep, linked, _, _ = self.episode(question, kg)
        steps = [HistoryStep(candidates=s.candidates, action=s.action, result=s.result) for s in ep.steps]
        rec = HistoryRecord(
            qid=question.qid,
            question=question.text,
            masked=linked.masked,
            steps=steps,
            answers=ep.answers,
            gold=list(question.answers),
            correct=answers_correct(kg, ep.answers, question.answers),
            qtype=question.qtype,
        )
        usage = usage_dict(ep.usage, self.llm.model_id if self.llm is not None else "")
        return rec, Answer(ep.answers, evidence=ep.evidence, usage=usage)
