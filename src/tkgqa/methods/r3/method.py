"""``r3``: Right for Right Reasons (Toroghi, Guo, Abdollah Pour, Sanner 2024) — verifiable commonsense KGQA.

``preset=paper`` (the default) uses the paper's prompts and formats (:mod:`.prompts.paper`) with the
authors' demonstrations loaded at run time (:mod:`.demos`); ``preset=ours`` the project's (see
:mod:`.config` and ``docs/r3_paper_vs_ours.md``). ``describe()`` names the preset, the deviations in force
and the demonstrations used; ``report_metrics`` adds the grounding score of the run to ``report.json``.

1. entities: the KG linker ∪ the LLM extractor (each reported); 2. an axiom (premises ⇒ conclusion) surfaced
from the LLM; 3. the 1-hop sub-graph pruned against it (embedding top-k ∪ the facts the LLM picks; truncation
as the ablation); 4. a fact-grounded answer whose every step cites listed facts (checked mechanically,
re-asked when a citation is not among them); 5. on "I don't know", the missing evidence and the entity to
expand, up to ``max_depth`` expansions per branch and ``breadth`` branches (:mod:`.search`); 6. preference
queries check every option premise by premise (:mod:`.preference`).

The :class:`~tkgqa.methods.base.Answer` carries the tree in its trace (``entities``, ``r3_tree`` with the
branches, axioms, nodes, cited facts and rejected replies, ``facts`` with every fact id shown, ``grounding``
with the cited facts of the final answer, ``explanation`` lines for the CLI); ``evidence`` are the cited
facts. An LLM backend failure raises :class:`~tkgqa.errors.LLMError`; unparsable output is retried, then
reported in the trace, and the question is abstained on when no grounded answer results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...datasets.base import Question
from ...errors import ParseError
from ...kg.base import KGStore
from ...llm import AnswerUsage, Usage, answer_usage
from ...outcomes import AbstainReason, ResultRow
from ...prompts.ask import Asker, Refused
from ...trace import TraceStep
from ..base import Answer, Method, RefusedStep, SetupNotes, missing_llm_error
from .config import SPEC_FLAGS, EntitySource, PremiseJudge, PromptStyle, R3Config
from .demos import DemoSource, load_demos
from .entities import EntityFinder, EntityReport
from .facts import Pruning, Ranker
from .grounding import run_summary
from .preference import OptionResult, PreferenceMatcher
from .prompting import Prompter
from .prompts import ours as P
from .search import SearchResult, TreeSearch
from .steps import (
    ChoiceGroundingStep,
    ExplanationStep,
    FactsStep,
    GroundingStep,
    PreferenceStep,
    TreeStep,
)
from .task import Task, TaskKind, calls_of, short_error


class R3Method(Method):
    """R3. ``llm``: a spec or backend (needed by every step but offline preference scoring); options in
    :class:`~.config.R3Config` (``spec``: ``"r3:truncation,max_depth=0"``)."""

    name = "r3"
    config_class = R3Config
    spec_flags = SPEC_FLAGS
    config: R3Config

    def setup(self) -> SetupNotes:
        self.linker = EntityFinder(self.config.max_entities, self.config.link_min_score)
        self._ranker: Ranker | None = None
        paper_style = PromptStyle.PAPER in (self.config.axiom_prompt, self.config.answer_prompt)
        wanted = DemoSource(self.config.preset_value("demos")) if paper_style else DemoSource.OURS
        self.demos = load_demos(wanted, self.config.demos_dir)
        settings: dict[str, Any] = {}
        if self.demos.source != self.config.demos:  # not found, or no paper-style prompt to show them in
            settings["demos"] = self.demos.source
        notes = [f"demos=ours: {self.demos.reason}"] if self.demos.reason else []
        notes += [f"ours for {m}" for m in self.demos.missing]
        return SetupNotes(settings=settings, fallbacks=tuple(notes))

    def describe(self) -> dict[str, Any]:
        """:meth:`Method.describe`, the demonstrations used (files, hashes) and any fallback."""
        out: dict[str, Any] = {**super().describe(), "demonstrations": self.demos.to_dict()}
        if self.notes.fallbacks:
            out["fallbacks"] = list(self.notes.fallbacks)
        return out

    def report_metrics(self, rows: Sequence[ResultRow]) -> dict[str, Any]:
        """R3's run summary for ``report.json`` (``method_metrics``): the grounding score over the run's rows
        and the citation check's rejections (see :func:`.grounding.run_summary`)."""
        return run_summary(rows)

    def prompter(self, task: Task) -> Prompter:
        return Prompter(self.config, self.demos, claim=task.claim)

    @property
    def ranker(self) -> Ranker | None:
        """The embedding ranker (``None`` for truncation pruning with the LLM judge)."""
        cfg = self.config
        if self._ranker is None and (cfg.pruning == Pruning.SEMANTIC or cfg.judge == PremiseJudge.EMBEDDING):
            from ...retrieval.embedders import resolve_embedder

            self._ranker = Ranker(resolve_embedder(cfg.embedder))
        return self._ranker

    # --- entities ---------------------------------------------------------------------------------------
    def extract_entities(self, question: Question, kg: KGStore, calls: Asker | None) -> EntityReport:
        """``EL(q, K) ∪ LLM_E(q)`` (or one of them, per ``entities``), each part reported."""
        source = self.config.entities
        by_linker = [e for e in question.entities if kg.has_entity(e)]
        if source != EntitySource.LLM:
            by_linker += [e for e in self.linker.linked(question.text, kg) if e not in by_linker]
        names: list[str] = []
        llm_linked: list[str] = []
        unlinked: list[str] = []
        error = ""
        if source != EntitySource.LINKER and calls is not None:
            prompt = self.prompter(Task.of(question)).entities(question.text)
            found = calls.ask(prompt, retries=self.config.retries)
            if isinstance(found, Refused):
                error = short_error(found.error)
            else:
                names = found.value
            llm_linked, unlinked = self.linker.link_names(names, kg)
        union = list(dict.fromkeys(by_linker + llm_linked))
        return EntityReport(
            tuple(by_linker), tuple(names), tuple(llm_linked), tuple(unlinked), tuple(union), error
        )

    # --- answering --------------------------------------------------------------------------------------
    def reason(self, question: Question, kg: KGStore) -> Answer:
        task = Task.of(question)
        offline_choice = task.kind == TaskKind.CHOICE and self.config.judge == PremiseJudge.EMBEDDING
        if self.llm is None and not offline_choice:
            raise missing_llm_error(self.name, alternative="r3:judge=embedding for preference questions")
        calls = calls_of(self.llm, self.config.max_tokens) if self.llm is not None else None
        if task.kind == TaskKind.CHOICE:
            return self._preference(question, kg, task, calls)
        assert calls is not None
        return self._query(question, kg, task, calls)

    def _query(self, question: Question, kg: KGStore, task: Task, calls: Asker) -> Answer:
        report = self.extract_entities(question, kg, calls)
        trace: list[TraceStep] = [report.step()]
        search = TreeSearch(
            self.config, calls, kg, question.text, task, self.linker, self.ranker, self.prompter(task)
        )
        result = search.run(list(report.union)) if report.union else SearchResult([], None, None)
        trace.append(self._tree(result))
        shown = sorted(
            {i for b in result.branches for n in b.nodes for i in n.facts}, key=lambda x: int(x[1:])
        )
        trace.append(FactsStep(search.pool.table(shown)))
        usage = answer_usage(calls.usage, self.llm)
        if result.final is None or result.final.answer is None:
            if not report.union:
                reason = AbstainReason.NO_QUESTION_ENTITY.note()
            elif all(b.axiom is None for b in result.branches):
                reason = AbstainReason.NO_AXIOM.note()
            else:
                depth, n = self.config.max_depth, len(result.branches)
                reason = AbstainReason.NO_GROUNDED_ANSWER.note(depth=depth, n=n)
            trace.append(ExplanationStep(self._lines(result, search, reason.text)))
            return Answer.abstain(reason, trace, usage=usage)
        answer = result.final.answer
        cited = list(answer.cited_facts)
        word = task.word(answer.verdict)
        assert word is not None
        trace.append(
            GroundingStep(
                verdict=str(answer.verdict),
                cited_facts=[{"id": i, **search.pool.fact(i).to_dict()} for i in cited],
                steps=[s.to_dict() for s in answer.steps],
                n_fact_steps=sum(bool(s.facts) for s in answer.steps),
            )
        )
        trace.append(ExplanationStep(self._lines(result, search, f"answer: {word}")))
        raw = (
            "\n".join(f"{s.text} [{', '.join(s.facts + s.rules)}]" for s in answer.steps)
            + f"\nAnswer: {word}"
        )
        return Answer([word], [search.pool.fact(i) for i in cited], trace, usage=usage, raw_output=raw)

    def _tree(self, result: SearchResult) -> TreeStep:
        final = result.final
        return TreeStep(
            max_depth=self.config.max_depth,
            breadth=self.config.breadth,
            branches=[b.to_dict() for b in result.branches],
            answered_at=None
            if final is None or result.final_branch is None
            else {"branch": result.final_branch.index, "depth": final.depth},
            verdict=str(final.verdict) if final is not None else str(P.Verdict.UNKNOWN),
        )

    @staticmethod
    def _lines(result: SearchResult, search: TreeSearch, outcome: str) -> list[str]:
        lines: list[str] = []
        for b in result.branches:
            if b.axiom is None:
                lines.append(f"branch {b.index + 1}: {b.error}")
                continue
            hint = " (a hint, no rule)" if b.axiom.hint else ""
            lines.append(f"axiom R{b.index + 1}{hint}: {b.axiom.rule}")
            lines += [f"  premise: {p}" for p in b.axiom.premises if p != b.axiom.rule]
            for n in b.nodes:
                lines.append(
                    f"  depth {n.depth}: {len(n.facts)} facts, verdict {n.verdict}"
                    + (f" ({n.note})" if n.note else "")
                )
                lines += [f"    rejected: {r}" for r in n.rejected]
                if n.answer is not None:
                    for k, s in enumerate(n.answer.steps, 1):
                        cites = ", ".join(s.facts + s.rules) or ("assumption" if s.assumption else "-")
                        lines.append(f"    step {k}: {s.text} [{cites}]")
                        lines += [f"      {i} {search.pool.text(i)}" for i in s.facts]
                if n.expanded:
                    lines.append(f"    missing: {n.need} → expand {n.expanded}")
        lines.append(outcome)
        return lines

    # --- preference matching ------------------------------------------------------------------------------
    def _preference(self, question: Question, kg: KGStore, task: Task, calls: Asker | None) -> Answer:
        matcher = PreferenceMatcher(self.config, calls, kg, question, task, self.ranker, self.prompter(task))
        premises = None
        if calls is None:  # offline embedding judge: the request itself is the one premise
            premises = [question.text]
        try:
            axiom, results, chosen = matcher.run(premises)
        except ParseError as exc:
            failed = [RefusedStep("step", "preference", short_error(exc))]
            return Answer.abstain(AbstainReason.AXIOM_UNPARSED.note(), failed, usage=self._usage_of(calls))
        trace: list[TraceStep] = [
            PreferenceStep(
                axiom=axiom.to_dict() if axiom else {"premises": list(premises or [])},
                judge=str(self.config.judge),
                choice_rule=matcher.rule_used,
                options=[r.to_dict() for r in results],
                chosen=None if chosen is None else results[chosen].option.id,
            ),
            FactsStep(
                matcher.pool.table(sorted({i for r in results for i in r.facts}, key=lambda x: int(x[1:])))
            ),
        ]
        usage = self._usage_of(calls)
        if chosen is None:
            return Answer.abstain(AbstainReason.NO_OPTION_JUDGED.note(), trace, usage=usage)
        best: OptionResult = results[chosen]
        cited = list(dict.fromkeys(i for c in best.checks for i in c.facts))
        trace.append(
            ChoiceGroundingStep("choice", [{"id": i, **matcher.pool.fact(i).to_dict()} for i in cited])
        )
        lines = [f"premise P{n}: {p}" for n, p in enumerate(axiom.premises if axiom else premises or [], 1)]
        for r in results:
            marks = ", ".join(
                f"P{c.premise} {c.status}" + (f" [{', '.join(c.facts)}]" if c.facts else "") for c in r.checks
            )
            lines.append(f"option {r.option.text}: {marks or r.error}")
        lines.append(f"answer: {best.option.text}")
        trace.append(ExplanationStep(lines))
        return Answer(
            [best.option.text],
            [matcher.pool.fact(i) for i in cited],
            trace,
            usage=usage,
            raw_output=best.option.text,
        )

    def _usage_of(self, calls: Asker | None) -> AnswerUsage:
        return answer_usage(calls.usage if calls is not None else Usage(), self.llm)
