"""``kg_rag``: facts retrieved around the question's linked entities (and times) put in the prompt.

Retrieval: the relations of the linked entities' 1-hop subgraph are ranked by similarity to the question
(``hashing`` embedder by default, no dependency); the facts of the best relations (restricted to the
question's times when it has some and that leaves any) are ranked by similarity of their verbalisation to
the question, and the best ``max_facts`` (20 in the paper) are listed in time order.
"""

from __future__ import annotations

from pydantic import Field

from ...datasets.base import Question
from ...errors import ConfigError
from ...kg.base import KGStore
from ...kg.fact import Fact
from ...llm import LLMBackend
from ...query import QuestionLinker
from ...retrieval.embedders import Embedder
from ...retrieval.similarity import Similarity
from ...trace import TraceStep
from ..base import Answer, Method, MethodConfig
from ..client import client_option
from .llm_only import ask_for_answers
from .prompts import KG_RAG_PROMPT
from .steps import RetrievalStep


class KGRAGConfig(MethodConfig):
    llm: str | None = None
    max_facts: int = Field(default=20, ge=1)
    top_relations: int = Field(default=5, ge=1)
    max_entities: int = Field(default=2, ge=1)
    embedder: str = "hashing"
    retries: int = Field(default=1, ge=0)
    max_tokens: int = client_option(64, ge=4, le=32_768)


def verbalize(kg: KGStore, fact: Fact) -> str:
    return (
        f"({kg.label(fact.subject)}, {kg.label(fact.relation)}, {kg.label(fact.object)}, {fact.time_text()})"
    )


class KGRAG(Method):
    name = "kg_rag"

    config_class = KGRAGConfig
    needs_llm = True
    config: KGRAGConfig
    llm: LLMBackend

    def setup(self) -> None:
        self.linker = QuestionLinker.anchors(self.config.max_entities)
        self._embedder: Embedder | None = None

    def _similarity(self, text: str) -> Similarity:
        if self._embedder is None and self.config.embedder != "lexical":
            from ...retrieval.embedders import resolve_embedder

            try:
                self._embedder = resolve_embedder(self.config.embedder)
            except (ImportError, ConfigError):
                self._embedder = None
        return Similarity(text, self._embedder)

    def retrieve(self, question: Question, kg: KGStore) -> list[Fact]:
        """At most ``max_facts`` facts around the question's entities, in time order."""
        anchors = self.linker.link(question, kg).anchors
        sim = self._similarity(question.text)
        relations = anchors.relations()
        rel_scores = dict(zip(relations, sim.scores([kg.label(r) for r in relations]), strict=True))
        best = set(sorted(relations, key=lambda r: -rel_scores[r])[: self.config.top_relations])
        pool: list[Fact] = []
        for e in anchors.entities:
            pool += [f for f in kg.facts(subject=e) if f.relation in best]
            pool += [f for f in kg.facts(object=e) if f.relation in best and f.subject != e]
        if anchors.times:
            timed = [f for t in anchors.times for e in anchors.entities for f in kg.facts(subject=e, time=t)]
            timed += [f for t in anchors.times for e in anchors.entities for f in kg.facts(object=e, time=t)]
            in_time = [f for f in timed if f.relation in best] or timed
            pool = in_time or pool
        pool = list(dict.fromkeys(pool))
        if not pool:
            return []
        scores = sim.scores([verbalize(kg, f) for f in pool])
        order = sorted(range(len(pool)), key=lambda i: -scores[i])
        chosen = [pool[i] for i in order[: self.config.max_facts]]
        return sorted(chosen, key=lambda f: (f.start.first_day if f.start else 0, f.subject))

    def reason(self, question: Question, kg: KGStore) -> Answer:
        facts = self.retrieve(question, kg)
        trace: list[TraceStep] = [RetrievalStep([verbalize(kg, f) for f in facts])]
        context = {"question": question.text, "facts": [verbalize(kg, f) for f in facts]}
        found = ask_for_answers(
            self.llm,
            KG_RAG_PROMPT,
            context,
            self.config.retries,
            self.config.max_tokens,
            trace,
        )
        if found.abstained:
            return found
        return Answer(
            found.answers, evidence=facts, trace=found.trace, usage=found.usage, raw_output=found.raw_output
        )
