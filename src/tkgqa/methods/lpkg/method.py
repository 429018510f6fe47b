"""The ``lpkg`` method: plan (in-context or fine-tuned planner) → parse → execute over the KG.

LPKG (Wang et al., Findings of EMNLP 2024): a planning LLM writes a code-formatted plan for the question
(:mod:`.planner`); the plan is parsed with ``ast`` into a typed :class:`~.plan.Plan` (never evaluated) and
interpreted (:mod:`.execute`): ``Search`` over the KG, ``Get_Answer`` by the shared offline reader or an LLM,
set / comparison / temporal steps as typed operations. A reply that does not parse falls back to asking the
question directly (the paper's executor does the same), recorded in the trace (``fallback``).

Options (``--method lpkg --method-option KEY=VALUE`` or ``"lpkg:planner=finetuned:NAME"``):
``planner`` (``icl`` | ``sft`` | ``finetuned:PATH`` | ``random`` | ``direct``; default ``icl`` with
``--llm``),
``k`` and ``demos`` (in-context demonstrations: a planning-data JSONL, else the built-in ones), ``search``
(``kg`` | ``retriever``; ``embedder``, ``search_k``), ``reader`` (``symbolic`` | ``llm``), ``max_fanout``
(answers a ``{Ans_k}`` sub-question is asked for), ``inference`` (fine-tuned planner: ``auto`` |
``llamacpp`` | ``transformers``; ``threads`` for llama.cpp), ``fallback``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from ...datasets.base import Question
from ...errors import ConfigError
from ...kg.base import KGStore
from ...llm import LLMBackend, llm_context, resolve_llm_arg, usage_dict
from ...query import ParserOptions, QuestionEntities, Reasoner
from ..base import METHODS, Answer, Method, MethodConfig, merge_config, parse_options
from .execute import (
    KGSearch,
    LLMReader,
    PlanExecutor,
    Reader,
    ReaderMode,
    RetrieverSearch,
    Searcher,
    SearchMode,
    SymbolicReader,
    direct_plan,
    final_labels,
)
from .metrics import plan_metrics
from .planner import Inference, Planner, resolve_planner


class LPKGConfig(MethodConfig):
    """LPKG settings (see the module docstring)."""

    planner: str = "icl"
    k: int = Field(default=4, ge=0, le=16)
    demos: str | None = None
    search: SearchMode = SearchMode.KG
    reader: ReaderMode = ReaderMode.SYMBOLIC
    embedder: str = "hashing"
    search_k: int = Field(default=30, ge=1)
    max_info: int = Field(default=5000, ge=1)
    max_fanout: int = Field(default=10, ge=1)
    llm_facts: int = Field(default=30, ge=1)
    max_plan_tokens: int = Field(default=400, ge=32)
    inference: Inference = Inference.AUTO
    threads: int | None = Field(default=None, ge=1)
    fallback: bool = True
    seed: int = 0


@METHODS.register("lpkg")
class LPKGMethod(Method):
    """LPKG. ``llm``: the in-context planner and/or the ``reader=llm`` answerer."""

    name = "lpkg"

    def __init__(
        self,
        llm: str | LLMBackend | None = None,
        config: LPKGConfig | None = None,
        spec: str | None = None,
        **overrides: Any,
    ) -> None:
        updates = {**parse_options(spec, method="lpkg", positional="planner"), **overrides}
        self.config: LPKGConfig = merge_config(LPKGConfig, config, updates)
        cfg = self.config
        self.llm = resolve_llm_arg(llm)
        if cfg.reader is ReaderMode.LLM and self.llm is None:
            raise ConfigError("lpkg reader=llm needs an LLM: pass --llm SPEC (or use reader=symbolic)")
        self.planner: Planner = resolve_planner(
            cfg.planner,
            llm=self.llm,
            demos=cfg.demos,
            k=cfg.k,
            seed=cfg.seed,
            max_tokens=cfg.max_plan_tokens,
            inference=cfg.inference,
            threads=cfg.threads,
        )
        self.reasoner = Reasoner(ParserOptions())
        self.linker = QuestionEntities()
        searcher: Searcher
        if cfg.search is SearchMode.RETRIEVER:
            searcher = RetrieverSearch(cfg.embedder, self.linker, k=cfg.search_k)
        else:
            searcher = KGSearch(self.reasoner, self.linker, max_info=cfg.max_info)
        reader: Reader
        if cfg.reader is ReaderMode.LLM:
            assert self.llm is not None
            reader = LLMReader(self.llm, max_facts=cfg.llm_facts)
        else:
            reader = SymbolicReader(self.reasoner)
        self.executor = PlanExecutor(searcher, reader, self.linker, max_fanout=cfg.max_fanout)

    def describe(self) -> dict[str, Any]:
        llm = None if self.llm is None else getattr(self.llm, "cache_namespace", lambda: None)()
        return {**super().describe(), "llm": llm, "planner_info": self.planner.describe()}

    def answer(self, question: Question, kg: KGStore) -> Answer:
        with llm_context(method=self.name, question_id=question.qid):
            out = self.planner.plan(question.text)
            plan, fallback = out.plan, False
            if plan is None and self.config.fallback:
                plan, fallback = direct_plan(question.text), True
            step: dict[str, Any] = {
                "step": "plan",
                "planner": self.planner.name,
                "text": out.text,
                "parsed": out.plan is not None,
                "error": out.error,
                "shape": out.plan.shape() if out.plan is not None else None,
                "pattern": (str(p) if (p := out.plan.pattern()) is not None else None) if out.plan else None,
                "fallback": fallback,
                "seconds": round(out.seconds, 4),
            }
            usage = dict(usage_dict(out.usage, self.llm if self.planner.name == "icl" else None))
            if plan is None:
                return Answer.abstain(f"the plan did not parse: {out.error}", trace=[step], usage=usage,
                                      raw_output=out.text)  # fmt: skip
            ex = self.executor.run(plan, kg, question.text)
        for key, value in usage_dict(ex.usage, self.llm).items():
            usage[key] = usage.get(key, 0) + value
        trace = [step, *ex.steps]
        labels = final_labels(ex.answers, kg)
        if not labels:
            reason = ex.error or "the plan's final step found no answer"
            return Answer.abstain(reason, trace=trace, usage=usage, raw_output=out.text)
        return Answer(labels, ex.answers.facts()[:50], trace, usage, raw_output=out.text)

    def report_metrics(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Plan metrics for ``report.json`` (see :mod:`.metrics`)."""
        return plan_metrics(rows)
