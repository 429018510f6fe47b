"""CIK-LLM (Di Maio et al.): relation paths chosen per question entity, evidence collected along them,
pruned (δ1 = 300, δ2 = 30, ±1 year), compressed, and answered by the LLM through Π_rog.

The paper publishes no code; choices it leaves open are documented where they are made
(:mod:`.paths`, :mod:`.pruning`, :mod:`.evidence`). Without an LLM the evidence pipeline still runs
(:meth:`CIKMethod.evidence`) with the deterministic :class:`~.paths.LexicalPathPolicy` choosing the paths.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from ...datasets.base import Question
from ...errors import ConfigError, ContextWindowError, LLMError, ParseError
from ...kg import KGStore
from ...llm.base import LLMBackend, Usage
from ...llm.cache import llm_context
from ...prompts.base import run_prompt
from ...prompts.cik import ESG_PROMPT, ROG_PROMPT
from ...retrieval.temporal import TimeConstraint, parse_time_constraint
from ..base import METHODS, Answer, Method, MethodConfig, merge_config, parse_options
from .evidence import RenderedEvidence, render_compressed, render_plain
from .grounding import QuestionEntities
from .llm_support import error_usage, resolve_backend, usage_dict
from .paths import (
    EntityRelations,
    LexicalPathPolicy,
    PathCheck,
    Traversal,
    relations_at_distance,
    traverse,
    validate_path,
)
from .pruning import (
    EvidenceFact,
    cap_facts,
    dedupe,
    flatten,
    lifetime_window,
    multi_hop_truncation,
    time_aware_prune,
)


class CIKConfig(MethodConfig):
    """CIK-LLM settings; defaults are the paper's (n = 3 hops, δ1 = 300, δ2 = 30, ±1 year)."""

    hops: int = Field(default=3, ge=1, le=5)
    delta1: int = Field(default=300, ge=1)
    delta2: int = Field(default=30, ge=1)
    margin_days: int = Field(default=365, ge=0)
    longest_per_tail: bool = True
    compress: bool = True
    elide_times: bool = True
    path_policy: Literal["llm", "lexical"] = "llm"
    policy_hops: int = Field(default=1, ge=1, le=5)
    policy_min_score: float = 0.5
    max_relations_per_hop: int = Field(default=60, ge=1)
    max_frontier: int = Field(default=1000, ge=1)
    max_retrieved: int = Field(default=20_000, ge=1)
    max_entities: int = Field(default=3, ge=1)
    max_tokens: int = Field(default=512, ge=16)
    esg_max_tokens: int = Field(default=128, ge=16)
    prompt_token_limit: int | None = None


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

    def counts(self) -> dict[str, int]:
        return {
            "retrieved": len(self.retrieved),
            "truncated": len(self.truncated),
            "time_pruned": len(self.time_pruned),
            "pruned": len(self.pruned),
        }

    def trace(self) -> dict[str, Any]:
        return {
            "step": "evidence",
            "entities": list(self.entities),
            "missing": list(self.missing),
            "paths": [
                {"entity": p.entity, "path": list(p.path), "dropped": [list(d) for d in p.dropped]}
                for p in self.paths
            ],
            "fallback": [t.entity for t in self.traversals if t.fallback],
            "counts": self.counts(),
            "constraint": str(self.constraint) if self.constraint else None,
            "selection_error": self.selection_error,
        }


@METHODS.register("cik")
class CIKMethod(Method):
    """CIK-LLM. ``llm``: a spec (``"openai:gpt-4o-mini"``) or backend; ``spec`` (``"cik:nocompress"``) or
    keyword overrides adjust :class:`CIKConfig`."""

    name = "cik"

    def __init__(
        self,
        llm: str | LLMBackend | None = None,
        config: CIKConfig | None = None,
        spec: str | None = None,
        **overrides: Any,
    ) -> None:
        updates = {**parse_options(spec, method="cik", flags=_SPEC_FLAGS), **overrides}
        self.config: CIKConfig = merge_config(CIKConfig, config, updates)
        self.llm = resolve_backend(llm)
        self.linker = QuestionEntities(self.config.max_entities)

    def describe(self) -> dict[str, Any]:
        llm = None if self.llm is None else getattr(self.llm, "cache_namespace", lambda: None)()
        return {**super().describe(), "llm": llm}

    # --- evidence ---------------------------------------------------------------------------------
    def _labels(self, kg: KGStore, names: Any) -> dict[str, str]:
        return {n: kg.label(n) for n in names}

    def _select_paths(
        self, question: str, kg: KGStore, rels: list[EntityRelations], use_llm: bool
    ) -> tuple[list[list[str]], Usage, str]:
        cfg = self.config
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
        markers = [
            (
                kg.label(r.entity),
                [[kg.label(x) for x in hop[: cfg.max_relations_per_hop]] for hop in r.by_hop],
            )
            for r in rels
        ]
        try:
            parsed = run_prompt(
                self.llm,
                ESG_PROMPT,
                {"question": question, "markers": markers},
                max_tokens=cfg.esg_max_tokens,
            )
        except (ParseError, LLMError) as exc:
            return [[] for _ in rels], error_usage(exc), f"{type(exc).__name__}: {exc}"[:300]
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
            walk = traverse(kg, r.entity, check.path, max_facts=cfg.max_retrieved)
            traversals.append(walk)
            retrieved += flatten(r.entity, walk.hops, walk.reached)
            truncated += flatten(r.entity, multi_hop_truncation(walk.hops, cfg.delta1), walk.reached)
        retrieved, truncated = dedupe(retrieved), dedupe(truncated)
        window = lifetime_window(kg, present, cfg.margin_days)
        several = len(present) > 1 and cfg.longest_per_tail
        time_pruned = time_aware_prune(truncated, window, several_entities=several)
        constraint = parse_time_constraint(text)
        pruned = cap_facts(time_pruned, cfg.delta2, constraint)
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
        )

    def render(
        self, stages: EvidenceStages, kg: KGStore, *, compress: bool | None = None
    ) -> RenderedEvidence:
        if self.config.compress if compress is None else compress:
            return render_compressed(stages.pruned, kg, stages.entities, elide_times=self.config.elide_times)
        return render_plain(stages.pruned, kg)

    # --- answering --------------------------------------------------------------------------------
    def answer(self, question: Question, kg: KGStore) -> Answer:
        if self.llm is None:
            raise ConfigError("the cik method needs an LLM: pass llm='openai:…' / 'llamacpp:smollm2' (--llm)")
        with llm_context(method=self.name, question_id=question.qid):
            return self._answer(question, kg, self.llm)

    def _answer(self, question: Question, kg: KGStore, llm: LLMBackend) -> Answer:
        stages = self.evidence(question, kg)
        trace = [stages.trace()]
        usage = stages.usage
        if not stages.entities:
            names = ", ".join(kg.label(e) for e in stages.missing)
            reason = (
                f"There's no information in the knowledge about {names}"
                if names
                else "no question entity found in the KG"
            )
            return Answer.abstain(reason, trace, usage=usage_dict(usage, llm))
        if not stages.pruned:
            return Answer.abstain("the evidence set is empty", trace, usage=usage_dict(usage, llm))
        rendered = self.render(stages, kg)
        layout = "plain" if rendered.map is None else ("tree" if self.config.elide_times else "flat")
        context = {
            "question": stages.question,
            "evidence": rendered.text,
            "map": rendered.map_text,
            "layout": layout,
        }
        tokens = rendered.tokens()
        trace.append({"step": "render", "compressed": rendered.map is not None, "tokens": tokens})
        limit = self.config.prompt_token_limit
        if limit is not None and tokens > limit:
            return Answer.abstain(
                f"evidence of {tokens} tokens exceeds the limit {limit}",
                trace,
                usage=usage_dict(usage, llm),
                evidence=[it.fact for it in stages.pruned],
            )
        try:
            parsed = run_prompt(llm, ROG_PROMPT, context, max_tokens=self.config.max_tokens)
        except ContextWindowError as exc:  # the paper's "token limit" failures: a clean abstention
            trace.append({"step": "answer", "error": str(exc)[:300]})
            return Answer.abstain(
                "the prompt does not fit the model's context window",
                trace,
                usage=usage_dict(usage, llm),
                evidence=[it.fact for it in stages.pruned],
            )
        except ParseError as exc:
            usage = usage + error_usage(exc)
            trace.append({"step": "answer", "error": str(exc)[:300]})
            return Answer.abstain(
                "could not parse the answer",
                trace,
                usage=usage_dict(usage, llm),
                raw_output=exc.raw,
                evidence=[it.fact for it in stages.pruned],
            )
        usage = usage + parsed.usage
        raw = parsed.value
        answers = [rendered.map.decompress_answer(a) if rendered.map else a for a in raw]
        answers = list(dict.fromkeys(a for a in answers if a))
        trace.append({"step": "answer", "raw": raw, "answers": answers})
        if not answers:
            return Answer.abstain(
                "the model found no answer in the evidence",
                trace,
                usage=usage_dict(usage, llm),
                raw_output=parsed.text,
                evidence=[it.fact for it in stages.pruned],
            )
        return Answer(
            answers=answers,
            evidence=[it.fact for it in stages.pruned],
            trace=trace,
            usage=usage_dict(usage, llm),
            raw_output=parsed.text,
        )


_SPEC_FLAGS: dict[str, tuple[str, Any]] = {
    "nocompress": ("compress", False),
    "no_compress": ("compress", False),
    "keep_times": ("elide_times", False),
    "lexical": ("path_policy", "lexical"),
    "keep_all_tails": ("longest_per_tail", False),
}
