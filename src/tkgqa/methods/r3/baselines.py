"""The baselines of R3's Table 2 that need no SPARQL endpoint: ``cot0`` / ``cot2`` (zero- and two-shot chain
of thought, the LLM alone) and ``kaping`` (Baek et al. 2023: the question's linked entities, their 1-hop
facts ranked by embedding similarity to the question, the top ``top_k`` in the prompt, then the answer).
KB-BINDER and KGR need SPARQL over live Wikidata and are not implemented (there is no Wikidata offline).

All three answer yes/no questions, claims and (with the options listed) preference queries. KAPING is asked
to cite the facts it uses as ``[F…]``; its citations are recorded (``grounding`` trace step, unknown ids
apart) but not enforced. An LLM backend failure raises; unparsable output is an abstention with the reason.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...datasets.base import Question
from ...kg.base import KGStore
from ...kg.fact import Fact
from ...llm import Message, answer_usage
from ...outcomes import AbstainReason
from ...prompts.ask import Asker, Refused
from ...trace import TraceStep
from ..base import Answer, Method, RefusedStep, missing_llm_error
from .config import BaselineConfig
from .entities import EntityFinder
from .facts import FactPool, Pruning, Ranker, prune, subgraph
from .prompts import baselines as B
from .steps import CitationStep, RetrievalStep
from .task import Task, TaskKind, calls_of, short_error


class _Baseline(Method):
    name: ClassVar[str] = "baseline"
    default_shots: ClassVar[int] = 0

    config_class = BaselineConfig
    config: BaselineConfig

    def prepare(self, overrides: dict[str, Any]) -> dict[str, Any]:
        overrides.setdefault("shots", self.default_shots)
        return overrides

    def _facts(self, question: Question, kg: KGStore, task: Task, pool: FactPool) -> list[str]:
        return []

    def reason(self, question: Question, kg: KGStore) -> Answer:
        if self.llm is None:
            raise missing_llm_error(self.name)
        task = Task.of(question)
        calls = calls_of(self.llm, self.config.max_tokens)
        pool = FactPool(kg)
        ids = self._facts(question, kg, task, pool)
        trace: list[TraceStep] = [RetrievalStep(pool.table(ids))] if ids else []
        lines = pool.lines(ids)
        if task.kind == TaskKind.CHOICE:
            options = [o.text for o in task.options]
            chosen = calls.ask(B.choice_prompt(question.text, options, lines), retries=self.config.retries)
            if isinstance(chosen, Refused):
                return self._unparsable(chosen, trace, calls)
            words, text = [chosen.value], chosen.text
        else:
            asked = B.reply_prompt(self._messages(question.text, task, lines), set(ids))
            reply = calls.ask(asked, retries=self.config.retries)
            if isinstance(reply, Refused):
                return self._unparsable(reply, trace, calls)
            word = task.word(reply.value.verdict)
            words, text = ([word] if word else []), reply.text
        cited_ids = list(dict.fromkeys(f"F{n}" for n in B._FACT_ID.findall(text)))
        known = set(ids)
        if ids:
            trace.append(
                CitationStep(
                    cited_facts=[{"id": i, **pool.fact(i).to_dict()} for i in cited_ids if i in known],
                    unknown_ids=[i for i in cited_ids if i not in known],
                )
            )
        usage = answer_usage(calls.usage, self.llm)
        evidence: list[Fact] = [pool.fact(i) for i in cited_ids if i in known]
        if not words:
            return Answer.abstain(AbstainReason.MODEL_DONT_KNOW.note(), trace, usage=usage, raw_output=text)
        return Answer(words, evidence, trace, usage=usage, raw_output=text)

    def _unparsable(self, refused: Refused, trace: list[TraceStep], calls: Asker) -> Answer:
        trace.append(RefusedStep("step", "parse_failure", short_error(refused.error)))
        return Answer.abstain(
            refused.reason, trace, usage=answer_usage(calls.usage, self.llm), raw_output=refused.raw
        )

    def _messages(self, question: str, task: Task, lines: list[tuple[str, str]]) -> list[Message]:
        return B.build_cot_messages(question, shots=self.config.shots, claim=task.claim)


class CoT0(_Baseline):
    """Zero-shot chain of thought ("Let's think step by step")."""

    name = "cot0"
    default_shots = 0


class CoT2(_Baseline):
    """Two-shot chain of thought (two worked examples of ours)."""

    name = "cot2"
    default_shots = 2


class KAPING(_Baseline):
    """KAPING: the top-k facts around the question's linked entities (by similarity to the question)."""

    name = "kaping"

    def setup(self) -> None:
        self.linker = EntityFinder(self.config.max_entities)
        self._ranker: Ranker | None = None

    def _facts(self, question: Question, kg: KGStore, task: Task, pool: FactPool) -> list[str]:
        if task.kind == TaskKind.CHOICE:
            candidates = list(kg)  # the question's own facts (options, personal KG)
        else:
            entities = [e for e in question.entities if kg.has_entity(e)]
            entities += [e for e in self.linker.linked(question.text, kg) if e not in entities]
            candidates = subgraph(kg, entities, self.config.direction)
        if not candidates:
            return []
        if self._ranker is None:
            from ...retrieval.embedders import resolve_embedder

            self._ranker = Ranker(resolve_embedder(self.config.embedder))
        ids = pool.add(candidates)
        kept, _ = prune(
            candidates,
            [pool.text(i) for i in ids],
            question.text,
            self.config.top_k,
            Pruning.SEMANTIC,
            self._ranker,
        )
        return [ids[i] for i in kept]

    def _messages(self, question: str, task: Task, lines: list[tuple[str, str]]) -> list[Message]:
        return B.build_kaping_messages(question, lines, claim=task.claim)
