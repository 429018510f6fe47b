"""The offline symbolic reasoner as a library: question → typed program → executor, over any store.

:class:`Reasoner` is what the ``symbolic`` method wraps, what ARI's symbolic policy compiles into actions and
what other methods use to answer sub-questions offline. Entity/time mentions are linked by rules
(:mod:`.mentions`, :mod:`.timeref`), relations by a lexicon built from the KG's relation names
(:mod:`.lexicon`), the question is parsed into a small program (:mod:`.program`) and executed
(:mod:`.executor`). Questions that come with their own facts (``question.context``) are parsed and answered
over a KG of those facts (:mod:`.contextual`, :func:`.context.context_kg`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...datasets.base import Question
from ...kg.base import KGStore
from ...kg.fact import Fact
from ..context import context_kg
from ..resources import PerKG
from ..text.lexicon import RelationLexicon
from ..text.mentions import SMALL_KG, MentionIndex
from .contextual import ContextParser
from .executor import Executor, Result
from .nodes import Program
from .parser import Parse, ParserOptions, QuestionParser

__all__ = ["Parse", "ParserOptions", "Reasoner", "Result"]


def given_entities(question: Question, kg: KGStore) -> list[str]:
    """Annotated question entities (CronQuestions QIDs) as KG names: the id itself when the KG has it,
    else its label from ``extra["entity_labels"]``."""
    labels = question.extra.get("entity_labels") or {}
    out = []
    for e in question.entities:
        if kg.has_entity(e):
            out.append(e)
        elif isinstance(labels, dict) and e in labels:
            out.append(str(labels[e]))
    return out


@dataclass(frozen=True)
class _Parsers:
    index: MentionIndex
    parser: QuestionParser | ContextParser


class Reasoner:
    """Parses and executes questions; per-KG linkers and lexicons are built once per store."""

    def __init__(
        self, options: ParserOptions | None = None, *, max_evidence: int = 50, cache_size: int = 8
    ) -> None:
        self.options = options or ParserOptions()
        self.max_evidence = max_evidence
        self._shared: PerKG[_Parsers] = PerKG(lambda kg: self._build(kg, False), size=max(1, cache_size))
        self._contextual: PerKG[_Parsers] = PerKG(lambda kg: self._build(kg, True), size=2)
        self._context: tuple[Question, KGStore] | None = None

    def _build(self, kg: KGStore, contextual: bool) -> _Parsers:
        index = MentionIndex(kg, scan=contextual)
        if index.small:
            return _Parsers(index, ContextParser(index))
        return _Parsers(index, QuestionParser(index, RelationLexicon(kg), self.options))

    def store_for(self, question: Question, kg: KGStore) -> KGStore:
        """The store ``question`` is answered over: its own context facts when it has them (unless ``kg``
        already is that small context KG), else ``kg``."""
        if not question.context:
            return kg
        if len(kg.entities) <= SMALL_KG and len(kg) > 0:
            return kg
        if self._context is not None and self._context[0] is question:
            return self._context[1]
        store = context_kg(question)
        self._context = (question, store)
        return store

    def parse(self, question: Question | str, kg: KGStore) -> Parse:
        """The program for ``question`` over ``kg`` (or why there is none)."""
        q = question if isinstance(question, Question) else Question(qid="adhoc", text=question)
        store = self.store_for(q, kg)
        parsers = (self._contextual if q.context else self._shared).get(store)
        if q.context and isinstance(parsers.parser, ContextParser):
            parsers.parser.set_order(list(q.context))
        return parsers.parser.parse(q.text, given_entities(q, store) or None)

    def execute(self, program: Program, kg: KGStore, *, priority: dict[Fact, int] | None = None) -> Result:
        """Run ``program`` over ``kg``; ``priority`` (fact → rank) breaks ties between equal answers."""
        return Executor(kg, max_evidence=self.max_evidence, priority=priority).run(program)

    @staticmethod
    def context_priority(question: Question) -> dict[Fact, int] | None:
        """Rank of each context fact (the retriever's order), used to break ties; ``None`` without context."""
        if not question.context:
            return None
        priority: dict[Fact, int] = {}
        for k, f in enumerate(question.context):
            priority.setdefault(f, k)
        return priority
