"""CIK-LLM (Di Maio et al.): relation paths chosen per question entity, evidence collected along them,
pruned (δ1 = 300, then time-aware pruning; δ2 = 30), compressed, and answered by the LLM through Π_rog.

The configuration runs under a preset (:mod:`.config`: ``paper`` by default, or ``ours``);
:meth:`CIKMethod.describe` (what ``report.json`` records) names the preset, the effective settings, every
deviation from the paper in force and the settings the paper leaves open. The paper publishes no code;
choices it leaves open are documented where they are made (:mod:`.paths`, :mod:`.pruning`,
:mod:`.evidence`). Without an LLM the evidence pipeline still runs (:meth:`CIKMethod.evidence`) with the
deterministic :class:`~.paths.LexicalPathPolicy` choosing the paths.

*Path selection failed* (no valid relation at hop 1 for an entity, or a path yielding no fact) is shown
in the trace (``path_failed``) and counted in ``report.json`` (:func:`.run_summary.run_summary`); the
paper's preset then has no evidence from that entity and abstains when no entity has any, so the
``answered`` rate is comparable to the paper's Table 2; ``fallback=true`` (ours) uses the 1-hop facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from ...datasets.base import Question
from ...kg import KGStore
from ...kg.fact import Fact
from ...llm import LLMBackend, Usage, answer_usage
from ...outcomes import AbstainReason, Abstention, ErrorKind, ResultRow
from ...prompts.ask import Refusal, Refused, ask
from ...query.link import QuestionLinker
from ...retrieval.temporal import TimeConstraint, parse_time_constraint
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
from .config import SPEC_FLAGS, CIKConfig, Delta2Rule, TimePruning
from .evidence import RenderedEvidence, render_compressed, render_plain
from .paths import (
    EntityRelations,
    LexicalPathPolicy,
    PathCheck,
    Traversal,
    relations_at_distance,
    traverse,
    validate_path,
)
from .prompts import ESG_PROMPT, ROG_PROMPT
from .pruning import (
    EvidenceFact,
    anchor_spans,
    cap_facts,
    dedupe,
    flatten,
    lifetime_window,
    multi_hop_truncation,
    time_aware_prune,
    truncate_hops,
)
from .run_summary import PATH_OVER_CONTEXT, run_summary
from .steps import AnswerStep, EvidenceStep, RenderStep


@dataclass(frozen=True)
class EvidenceStages:
    """Everything the evidence pipeline produced for one question (facts per stage, paths, reports)."""

    question: str
    entities: tuple[str, ...]
    missing: tuple[str, ...]
    relations: tuple[EntityRelations, ...]
    paths: tuple[PathCheck, ...]
    traversals: tuple[Traversal, ...]
    retrieved: tuple[EvidenceFact, ...]
    truncated: tuple[EvidenceFact, ...]
    time_pruned: tuple[EvidenceFact, ...]
    pruned: tuple[EvidenceFact, ...]
    constraint: TimeConstraint | None
    usage: Usage = field(default_factory=Usage)
    selection_error: str = ""
    delta2: int = 30

    @property
    def path_failed(self) -> tuple[str, ...]:
        """The question entities whose path selection failed (no valid path, or no fact along it)."""
        return tuple(t.entity for t in self.traversals if t.failed)

    @property
    def over_delta2(self) -> bool:
        """More than δ2 facts went to the prompt (possible when the δ2 rule is ``none`` or ``hops``)."""
        return len(self.pruned) > self.delta2

    def counts(self) -> dict[str, int]:
        return {
            "retrieved": len(self.retrieved),
            "truncated": len(self.truncated),
            "time_pruned": len(self.time_pruned),
            "pruned": len(self.pruned),
        }

    def trace(self) -> EvidenceStep:
        """The answer's ``evidence`` trace step."""
        return EvidenceStep(
            entities=list(self.entities),
            missing=list(self.missing),
            paths=[
                {"entity": p.entity, "path": list(p.path), "dropped": [list(d) for d in p.dropped]}
                for p in self.paths
            ],
            path_failed=list(self.path_failed),
            fallback=[t.entity for t in self.traversals if t.fallback],
            counts=self.counts(),
            over_delta2=self.over_delta2,
            constraint=str(self.constraint) if self.constraint else None,
            selection_error=self.selection_error,
        )


class CIKMethod(Method):
    """CIK-LLM. ``llm``: a spec (``"openai:gpt-4o-mini"``) or backend; ``spec`` (``"cik:nocompress"``,
    ``"cik:ours"``) or keyword overrides adjust :class:`CIKConfig`. ``requested`` is the configuration as
    given, ``config`` the effective one (the preset's values filled in)."""

    name = "cik"
    config_class = CIKConfig
    spec_flags = SPEC_FLAGS
    config: CIKConfig

    def setup(self) -> None:
        self.linker = QuestionLinker(self.config.max_entities)

    def report_metrics(self, rows: Sequence[ResultRow]) -> dict[str, Any]:
        """Run-level counts for ``report.json`` (path selection failures, fallbacks, δ2, token limits)."""
        return run_summary(rows)

    # --- evidence ---------------------------------------------------------------------------------
    def _labels(self, kg: KGStore, names: Any) -> dict[str, str]:
        return {n: kg.label(n) for n in names}

    def _select_paths(
        self, question: str, kg: KGStore, rels: list[EntityRelations], use_llm: bool
    ) -> tuple[list[list[str]], Usage, str]:
        cfg = self.config
        if not rels:  # no question entity in the KG: nothing to choose from, no LLM call
            return [], Usage(), ""
        if not use_llm or self.llm is None:
            policy = LexicalPathPolicy(cfg.policy_hops, cfg.policy_min_score)
            return (
                [
                    policy.choose(question, r, self._labels(kg, {x for h in r.by_hop for x in h}))
                    for r in rels
                ],
                Usage(),
                "",
            )
        cap = cfg.max_relations_per_hop
        markers = [
            (
                kg.label(r.entity),
                [[kg.label(x) for x in (hop[:cap] if cap else hop)] for hop in r.by_hop],
            )
            for r in rels
        ]
        context = {"question": question, "markers": markers}
        parsed = ask(self.llm, ESG_PROMPT, context, window=True, max_tokens=cfg.esg_max_tokens)
        if isinstance(parsed, Refused):  # no paths proposed; other LLM errors propagate
            exc = parsed.error
            return [[] for _ in rels], parsed.usage, f"{type(exc).__name__}: {exc}"[:300]
        paths = list(parsed.value[: len(rels)])
        paths += [[] for _ in range(len(rels) - len(paths))]
        return paths, parsed.usage, ""

    def evidence(self, question: Question | str, kg: KGStore, *, use_llm: bool = True) -> EvidenceStages:
        """Retrieval, truncation and time-aware pruning for one question (LLM only for path selection)."""
        cfg = self.config
        text = question.text if isinstance(question, Question) else question
        entities = self.linker(question, kg)
        present = [e for e in entities if kg.count(subject=e) + kg.count(object=e) > 0]
        missing = tuple(e for e in entities if e not in present)
        rels = [relations_at_distance(kg, e, cfg.hops, max_frontier=cfg.max_frontier) for e in present]
        proposals, usage, error = self._select_paths(text, kg, rels, use_llm and cfg.path_policy == "llm")
        checks: list[PathCheck] = []
        traversals: list[Traversal] = []
        retrieved: list[EvidenceFact] = []
        truncated: list[EvidenceFact] = []
        for r, proposal in zip(rels, proposals, strict=True):
            labels = self._labels(kg, {x for h in r.by_hop for x in h})
            check = validate_path(r.entity, proposal, r, labels)
            checks.append(check)
            walk = traverse(
                kg, r.entity, check.path, max_facts=cfg.max_retrieved, fallback=bool(cfg.fallback)
            )
            traversals.append(walk)
            retrieved += flatten(r.entity, walk.hops, walk.reached)
            truncated += flatten(r.entity, multi_hop_truncation(walk.hops, cfg.delta1), walk.reached)
        retrieved, truncated = dedupe(retrieved), dedupe(truncated)
        time_pruned = self.time_prune(kg, present, truncated)
        constraint = parse_time_constraint(text)
        pruned = self.apply_delta2(time_pruned, constraint)
        return EvidenceStages(
            text,
            tuple(present),
            missing,
            tuple(rels),
            tuple(checks),
            tuple(traversals),
            tuple(retrieved),
            tuple(truncated),
            tuple(time_pruned),
            tuple(pruned),
            constraint,
            usage,
            error,
            cfg.delta2,
        )

    def time_prune(self, kg: KGStore, present: list[str], items: list[EvidenceFact]) -> list[EvidenceFact]:
        """Stage 2 with the configured time rule (:class:`~.config.TimePruning`)."""
        cfg = self.config
        several = len(present) > 1 and cfg.longest_per_tail
        rule = cfg.time_pruning
        assert rule is not None
        match rule:
            case TimePruning.FOOTNOTE:
                anchors = anchor_spans(kg, present, cfg.margin_days)
                return time_aware_prune(items, several_entities=several, anchors=anchors)
            case TimePruning.LIFETIME:
                window = lifetime_window(kg, present, cfg.margin_days)
                return time_aware_prune(items, window, several_entities=several)
            case TimePruning.OFF:
                return time_aware_prune(items, several_entities=several)
            case _:
                assert_never(rule)

    def apply_delta2(
        self, items: list[EvidenceFact], constraint: TimeConstraint | None
    ) -> list[EvidenceFact]:
        """What happens above δ2 (:class:`~.config.Delta2Rule`)."""
        cfg = self.config
        rule = cfg.delta2_rule
        assert rule is not None
        match rule:
            case Delta2Rule.NONE:
                return items
            case Delta2Rule.HOPS:
                return truncate_hops(items, cfg.delta2)
            case Delta2Rule.PHI_T:
                return cap_facts(items, cfg.delta2, constraint)
            case _:
                assert_never(rule)

    def render(
        self, stages: EvidenceStages, kg: KGStore, *, compress: bool | None = None
    ) -> RenderedEvidence:
        if self.config.compress if compress is None else compress:
            elide = bool(self.config.elide_times)
            return render_compressed(stages.pruned, kg, stages.entities, elide_times=elide)
        return render_plain(stages.pruned, kg)

    # --- answering --------------------------------------------------------------------------------
    def reason(self, question: Question, kg: KGStore) -> Answer:
        if self.llm is None:
            raise missing_llm_error(self.name)
        return self._answer(question, kg, self.llm)

    def _answer(self, question: Question, kg: KGStore, llm: LLMBackend) -> Answer:
        stages = self.evidence(question, kg)
        trace: list[TraceStep] = [stages.trace()]
        usage = stages.usage
        c = stages.counts()
        label = (
            f"evidence for {len(stages.entities)} entities: {c['retrieved']} retrieved → {c['truncated']} "
            f"after δ1 → {c['time_pruned']} time-pruned → {c['pruned']} kept"
        )
        ok = not stages.path_failed
        report_step(StepEvent(StepKind.STAGE, 0, label, count=c["pruned"], ok=ok))
        reason = self._no_evidence(stages, kg)
        if reason is not None:
            return Answer.abstain(reason, trace, usage=answer_usage(usage, llm))
        rendered = self.render(stages, kg)
        layout = self.config.layout
        tokens = rendered.tokens()
        trace.append(RenderStep(compressed=rendered.map is not None, layout=layout, tokens=tokens))
        report_step(StepEvent(StepKind.STAGE, 1, f"evidence rendered ({layout}): {tokens} tokens"))
        evidence = [it.fact for it in stages.pruned]
        limit = self.config.prompt_token_limit
        if limit is not None and tokens > limit:
            return Answer.abstain(
                AbstainReason.EVIDENCE_OVER_LIMIT.note(tokens=tokens, limit=limit),
                trace,
                usage=answer_usage(usage, llm),
                evidence=evidence,
            )
        context = {
            "question": stages.question,
            "evidence": rendered.text,
            "map": rendered.map_text,
            "layout": layout,
        }
        return self._reason(llm, context, rendered, evidence, trace, usage)

    def _no_evidence(self, stages: EvidenceStages, kg: KGStore) -> Abstention | None:
        """Why there is nothing to answer from (no question entity in the KG, an empty evidence set), or
        ``None``."""
        if not stages.entities:
            names = ", ".join(kg.label(e) for e in stages.missing)
            return (
                AbstainReason.NO_INFORMATION_ABOUT.note(names=names)
                if names
                else AbstainReason.NO_QUESTION_ENTITY.note()
            )
        if stages.pruned:
            return None
        failed = stages.path_failed
        if not failed or any(t.n_facts for t in stages.traversals):
            return AbstainReason.EVIDENCE_EMPTY.note()
        error = stages.selection_error
        if ErrorKind.of_text(error) is ErrorKind.CONTEXT_WINDOW:
            why = PATH_OVER_CONTEXT
        elif error:
            why = f"Π_esg gave no usable path ({error.split(':', 1)[0]})"
        else:
            why = f"no relation path yields facts for {', '.join(kg.label(e) for e in failed)}"
        return AbstainReason.PATH_SELECTION_FAILED.note(why=why)

    def _reason(
        self,
        llm: LLMBackend,
        context: dict[str, Any],
        rendered: RenderedEvidence,
        evidence: list[Fact],
        trace: list[TraceStep],
        usage: Usage,
    ) -> Answer:
        """Π_rog over the rendered evidence; ``usage``: what the path selection spent. A prompt too long for
        the model (the paper's "token limit" failures) is a clean abstention, its call not counted."""
        outcome = ask(
            llm,
            ROG_PROMPT,
            context,
            reason=AbstainReason.ANSWER_UNPARSED,
            spent=usage,
            window=True,
            max_tokens=self.config.max_tokens,
        )
        if isinstance(outcome, Refused):
            if outcome.kind is Refusal.UNPARSABLE:
                usage = usage + outcome.usage
            return abstain_refused(outcome, trace, usage, llm, entry=("step", "answer"), evidence=evidence)
        usage = usage + outcome.usage
        raw = outcome.value
        answers = [rendered.map.decompress_answer(a) if rendered.map else a for a in raw]
        answers = list(dict.fromkeys(a for a in answers if a))
        trace.append(AnswerStep(raw=raw, answers=answers))
        empty = AbstainReason.MODEL_NO_ANSWER_IN_EVIDENCE.note()
        return listed_answer(answers, outcome.text, trace, usage, llm, empty=empty, evidence=evidence)
