"""The ``lpkg`` method: plan (in-context or fine-tuned planner) → parse → execute over the KG.

LPKG (Wang et al., Findings of EMNLP 2024): a planning LLM writes a code-formatted plan for the question
(:mod:`.planner`); the plan is parsed with ``ast`` into a typed :class:`~.plan.Plan` (never evaluated) and
interpreted (:mod:`.execute`): ``Search`` over the KG, ``Get_Answer`` by a QA LLM or the shared offline
reader, set / comparison / temporal steps as typed operations. A reply that does not parse falls back to
asking the question directly (the paper's executor does the same), recorded in the trace (``fallback``).

``preset=paper`` (the default, :mod:`.config`) executes as the paper: the authors' QA prompt with a 5-sample
vote per sub-question, the question answered directly whenever a sub-answer is empty (trace step
``empty_fallback``), ``Compare`` by the LLM, ten KG-derived demonstrations in the official prompt — it needs
``--llm``. ``preset=ours`` (``lpkg:ours``) is the offline variant (symbolic reader, compact prompt, four
built-in demonstrations); each difference is also one option. ``report.json`` names the preset and every
deviation in force (``method.preset``, ``method.deviations``, ``method.unspecified_by_paper``).

Options (``--method lpkg --method-option KEY=VALUE`` or ``"lpkg:planner=finetuned:NAME"``):
``planner`` (``icl`` | ``sft`` | ``finetuned:PATH`` | ``random`` | ``direct``; default ``icl`` with
``--llm``), ``k``, ``demos`` (a planning-data JSONL, or the authors' official planning prompt ``.json``),
``demo_source`` (``kg`` | ``builtin``), ``plan_format`` (``official`` | ``compact``), ``search`` (``kg`` |
``retriever``; ``embedder``, ``search_k``), ``reader`` (``llm`` | ``symbolic``), ``qa_prompt`` (``authors``
| ``kg_only``), ``votes``, ``vote_temperature``, ``empty_fallback``, ``compare`` (``llm`` | ``rule``),
``max_fanout`` (answers a ``{Ans_k}`` sub-question is asked for), ``inference`` (fine-tuned planner:
``auto`` | ``llamacpp`` | ``transformers``; ``threads`` for llama.cpp), ``fallback``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ...datasets.base import Question
from ...errors import ConfigError
from ...kg.base import KGStore
from ...llm import answer_usage
from ...outcomes import AbstainReason, Abstention, ResultRow
from ...query import ParserOptions, QuestionLinker, Reasoner
from ...trace import TraceStep
from ..base import Answer, Method, Preset
from .config import CompareHow, LPKGConfig, PlanDemoSource, PlanFormat, QAPrompt
from .execute import (
    Execution,
    KGSearch,
    LLMComparer,
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
from .official import is_official_file
from .planner import ICLPlanner, Planner, resolve_planner
from .prompts import ANSWER_PROMPT, AUTHORS_ANSWER_PROMPT, Demo
from .steps import EmptyFallbackStep, PlanStep


class LPKGMethod(Method):
    """LPKG. ``llm``: the in-context planner, the QA reader and ``Compare`` of the paper preset.
    ``requested`` is the configuration as given, ``config`` the effective one (the preset filled in)."""

    name = "lpkg"

    config_class = LPKGConfig
    spec_positional = "planner"  # "lpkg:random", "lpkg:finetuned:NAME"; "lpkg:ours" is the preset
    config: LPKGConfig

    def setup(self) -> None:
        cfg = self.config
        reader_mode = ReaderMode(cfg.preset_value("reader"))
        compare = CompareHow(cfg.preset_value("compare"))
        if self.llm is None and (reader_mode is ReaderMode.LLM or compare is CompareHow.LLM):
            what = "preset=paper runs" if cfg.preset is Preset.PAPER else "reader=llm / compare=llm run"
            raise ConfigError(
                f"lpkg {what} the paper's QA LLM (Get_Answer with a 5-sample vote, Compare) and needs an "
                "LLM: pass --llm SPEC (e.g. --llm llamacpp:smollm2); offline, use preset=ours "
                "(--method lpkg:ours, or --preset ours for tkgqa lpkg plan: the symbolic reader, "
                "reader=symbolic, compare=rule)"
            )
        self._kg_demos = (
            cfg.demos is None and PlanDemoSource(cfg.preset_value("demo_source")) is PlanDemoSource.KG
        )
        self._demos_for: dict[str, list[Demo]] = {}
        self._lock = threading.Lock()
        self.planner: Planner = resolve_planner(
            cfg.planner,
            llm=self.llm,
            demos=cfg.demos,
            k=int(cfg.preset_value("k")),
            seed=cfg.seed,
            max_tokens=cfg.max_plan_tokens,
            inference=cfg.inference,
            threads=cfg.threads,
            official=PlanFormat(cfg.preset_value("plan_format")) is PlanFormat.OFFICIAL,
            demos_later=self._kg_demos,
        )
        self.reasoner = Reasoner(ParserOptions())
        self.linker = QuestionLinker()
        self.executor = PlanExecutor(
            self._searcher(),
            self._reader(reader_mode),
            self.linker,
            max_fanout=cfg.max_fanout,
            comparer=LLMComparer(self.llm) if compare is CompareHow.LLM and self.llm is not None else None,
            stop_on_empty=bool(cfg.preset_value("empty_fallback")),
        )

    def _searcher(self) -> Searcher:
        cfg = self.config
        if cfg.search is SearchMode.RETRIEVER:
            return RetrieverSearch(cfg.embedder, self.linker, k=cfg.search_k)
        return KGSearch(self.reasoner, self.linker, max_info=cfg.max_info)

    def _reader(self, mode: ReaderMode) -> Reader:
        cfg = self.config
        if mode is ReaderMode.SYMBOLIC:
            return SymbolicReader(self.reasoner)
        assert self.llm is not None
        own = QAPrompt(cfg.preset_value("qa_prompt")) is QAPrompt.AUTHORS
        return LLMReader(
            self.llm,
            max_facts=cfg.llm_facts,
            prompt=AUTHORS_ANSWER_PROMPT if own else ANSWER_PROMPT,
            votes=int(cfg.preset_value("votes")),
            temperature=cfg.vote_temperature,
        )

    def describe(self) -> dict[str, Any]:
        """:meth:`Method.describe`, the planner and where the demonstrations come from."""
        return {**super().describe(), "planner_info": self.planner.describe(), "demos": self.demo_origin()}

    def demo_origin(self) -> str:
        """Where the in-context demonstrations come from: ``official`` (the authors' prompt file),
        ``planning_data`` (a ``tkgqa lpkg data`` file), ``kg`` (derived from the evaluated KG) or
        ``builtin``."""
        demos = self.config.demos
        if demos is not None:
            return "official" if is_official_file(demos) else "planning_data"
        return "kg" if self._kg_demos else "builtin"

    def _ensure_demos(self, kg: KGStore) -> None:
        """KG-derived demonstrations (``demo_source=kg``): built from ``kg`` at its first question."""
        if not (self._kg_demos and isinstance(self.planner, ICLPlanner)):
            return
        with self._lock:
            if kg.name not in self._demos_for:
                from .data import kg_demos

                k = int(self.config.preset_value("k"))
                self._demos_for[kg.name] = kg_demos(kg, k, seed=self.config.seed)
            self.planner.set_demos(self._demos_for[kg.name])

    def reason(self, question: Question, kg: KGStore) -> Answer:
        self._ensure_demos(kg)
        out = self.planner.plan(question.text)
        plan, fallback = out.plan, False
        if plan is None and self.config.fallback:
            plan, fallback = direct_plan(question.text), True
        step = PlanStep(
            planner=self.planner.name,
            text=out.text,
            parsed=out.plan is not None,
            error=out.error,
            shape=out.plan.shape() if out.plan is not None else None,
            pattern=(str(p) if (p := out.plan.pattern()) is not None else None) if out.plan else None,
            fallback=fallback,
            seconds=round(out.seconds, 4),
        )
        usage = answer_usage(out.usage, self.llm if self.planner.name in {"icl", "sft"} else None)
        if plan is None:
            reason = AbstainReason.PLAN_UNPARSED.note(error=out.error)
            return Answer.abstain(reason, trace=[step], usage=usage, raw_output=out.text)
        ex = self.executor.run(plan, kg, question.text)
        trace: list[TraceStep] = [step, *ex.steps]
        if not fallback and self._empty(ex):
            reason = (
                AbstainReason.PLAN_STEP_EMPTY.note(step=ex.empty)
                if ex.empty
                else Abstention.of(ex.error) or AbstainReason.PLAN_FINAL_EMPTY.note()
            )
            first = ex
            ex = self.executor.run(direct_plan(question.text), kg, question.text)
            ex.usage = first.usage + ex.usage
            trace.append(EmptyFallbackStep(reason.text))
            trace.extend(ex.steps)
        usage = usage + answer_usage(ex.usage, self.llm)
        labels = final_labels(ex.answers, kg)
        if not labels:
            reason = Abstention.of(ex.error) or AbstainReason.PLAN_NO_ANSWER.note()
            return Answer.abstain(reason, trace=trace, usage=usage, raw_output=out.text)
        return Answer(labels, ex.answers.facts()[:50], trace, usage, raw_output=out.text)

    def _empty(self, ex: Execution) -> bool:
        """The paper preset's fall-back condition: a sub-answer, a set operation or the final answer empty."""
        if not self.config.preset_value("empty_fallback"):
            return False
        return bool(ex.empty) or not len(ex.answers) or bool(ex.error)

    def report_metrics(self, rows: Sequence[ResultRow]) -> dict[str, Any]:
        """Plan metrics for ``report.json`` (see :mod:`.metrics`)."""
        return plan_metrics(rows)
