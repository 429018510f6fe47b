"""The offline symbolic temporal reasoner (method ``"symbolic"``): question → typed program → KG operators.

No LLM and no training: entity/time mentions are linked by rules (:mod:`.mentions`, :mod:`.timeref`),
relations by a lexicon built from the KG's relation names (:mod:`.lexicon`), the question is parsed into a
small program (:mod:`.program`) and executed over the store (:mod:`.executor`). Questions that come with
their own facts (``question.context``, e.g. TimeQuestions with retrieved facts) are answered over a KG of
those facts (:mod:`.contextual`). When no program can be built the method abstains.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

from ...datasets.base import Question
from ...kg.base import KGStore
from ...kg.fact import Fact
from ...kg.memory import TemporalKG
from ..base import METHODS, Answer, Method, MethodConfig, merge_config
from .contextual import ContextParser
from .executor import Executor
from .lexicon import RelationLexicon
from .mentions import SMALL_KG, MentionIndex
from .parser import Parse, ParserOptions, QuestionParser
from .program import Program, pretty

__all__ = ["SymbolicConfig", "SymbolicReasoner", "pretty"]


class SymbolicConfig(MethodConfig):
    """Settings of the symbolic reasoner (defaults measured on the shared development data)."""

    after_reference: Literal["first", "last"] = "first"
    before_reference: Literal["first", "last"] = "first"
    set_order: Literal["count", "recent", "earliest"] = "count"
    exclude_question_entities: bool = True
    relation_candidates: int = 2
    relax: bool = True  # no fact of the asked relation: its reverse reading, then the second-best relation
    any_relation: bool = False  # ... then any relation between the same entities (a guess, ~24% right on
    # MultiTQ; on: higher Hits@1, lower accuracy on answered — see bench/RESULTS.md)
    max_evidence: int = 50
    cache_size: int = 8


def _given_entities(question: Question, kg: KGStore) -> list[str]:
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
class _Resources:
    kg: KGStore
    index: MentionIndex
    parser: QuestionParser | ContextParser


@METHODS.register("symbolic")
class SymbolicReasoner(Method):
    """Deterministic parser + executor; caches per-KG linkers (keyed by KG identity) on the instance."""

    name = "symbolic"

    def __init__(self, config: SymbolicConfig | None = None, **overrides: object) -> None:
        self.config: SymbolicConfig = merge_config(SymbolicConfig, config, overrides)
        self._resources: OrderedDict[tuple[int, bool], _Resources] = OrderedDict()
        self._contexts: dict[tuple[int, bool], tuple[Question, KGStore]] = {}

    def _for(self, kg: KGStore, contextual: bool = False) -> _Resources:
        key = (id(kg), contextual)
        res = self._resources.get(key)
        if res is not None and res.kg is kg:
            self._resources.move_to_end(key)
            return res
        index = MentionIndex(kg, scan=contextual)
        parser: QuestionParser | ContextParser
        if index.small:
            parser = ContextParser(index)
        else:
            options = ParserOptions(
                after_reference=self.config.after_reference,
                before_reference=self.config.before_reference,
                set_order=self.config.set_order,
                exclude_question_entities=self.config.exclude_question_entities,
                relation_candidates=self.config.relation_candidates,
                relax=self.config.relax,
                any_relation=self.config.any_relation,
            )
            parser = QuestionParser(index, RelationLexicon(kg), options)
        res = _Resources(kg, index, parser)
        self._resources[key] = res
        while len(self._resources) > max(1, self.config.cache_size):
            self._resources.popitem(last=False)
        return res

    def parse(self, question: Question | str, kg: KGStore) -> Parse:
        """The program for ``question`` over ``kg`` (or why there is none); a question with ``context`` is
        parsed against its context facts (pass the KG built from them, or any KG to build it here)."""
        q = question if isinstance(question, Question) else Question(qid="adhoc", text=question)
        store = self._store_for(q, kg)
        res = self._for(store, contextual=bool(q.context))
        if q.context and isinstance(res.parser, ContextParser):
            res.parser.set_order(list(q.context))
        return res.parser.parse(q.text, _given_entities(q, store) or None)

    def answer(self, question: Question, kg: KGStore) -> Answer:
        store = self._store_for(question, kg)
        priority: dict[Fact, int] | None = None
        if question.context:
            priority = {}
            for k, f in enumerate(question.context):
                priority.setdefault(f, k)
        parsed = self.parse(question, store)
        trace: list[dict[str, object]] = [{"parse": parsed.info}]
        if parsed.program is None:
            return Answer.abstain(parsed.reason, trace=trace)
        return self.execute(parsed.program, store, trace, priority=priority)

    def execute(
        self,
        program: Program,
        kg: KGStore,
        trace: list[dict[str, object]] | None = None,
        *,
        priority: dict[Fact, int] | None = None,
    ) -> Answer:
        """Run a program over ``kg``; ``priority`` (fact → rank) breaks ties between equally good answers."""
        executor = Executor(kg, max_evidence=self.config.max_evidence, priority=priority)
        result = executor.run(program)
        steps: list[dict[str, object]] = [{"program": pretty(program)}, *(trace or []), *result.steps]
        if not result.answers:
            return Answer.abstain(
                "the program found no answer in the KG", trace=steps, evidence=result.evidence
            )
        return Answer(answers=result.answers, evidence=result.evidence, trace=steps)

    def _store_for(self, question: Question, kg: KGStore) -> KGStore:
        """Questions with their own facts are answered over those facts (unless ``kg`` already is that small
        context KG)."""
        if not question.context:
            return kg
        if len(kg.entities) <= SMALL_KG and len(kg) > 0:
            return kg
        key = (id(question), True)
        cached = self._contexts.get(key)
        if cached is not None and cached[0] is question:
            return cached[1]
        store = TemporalKG(question.context, name=f"context:{question.qid}", display_underscores=False)
        self._contexts = {key: (question, store)}
        return store
