"""The offline symbolic temporal reasoner (method ``"symbolic"``): question → typed program → KG operators.

The reasoning itself lives in the shared query layer (:class:`tkgqa.query.Reasoner`: mentions, time
reader, relation lexicon, parser, program, executor), which other methods reuse; this module wraps it as a
:class:`~tkgqa.methods.Method` with a typed config. When no program can be built the method abstains.
"""

from __future__ import annotations

from ...datasets.base import Question
from ...kg.base import KGStore
from ...kg.fact import Fact
from ...outcomes import AbstainReason
from ...query import AnswerOrder, Extreme, Parse, ParserOptions, Program, Reasoner, pretty
from ...query.program.steps import ParseStep, ProgramStep
from ...trace import TraceStep
from ..base import Answer, Method, MethodConfig, options_from
from ..client import client_option

__all__ = ["SymbolicConfig", "SymbolicReasoner", "pretty"]


class SymbolicConfig(MethodConfig):
    """Settings of the symbolic reasoner (defaults measured on the shared development data)."""

    after_reference: Extreme = client_option(Extreme.FIRST)
    before_reference: Extreme = client_option(Extreme.FIRST)
    set_order: AnswerOrder = client_option(AnswerOrder.COUNT)
    exclude_question_entities: bool = client_option(True)
    relation_candidates: int = client_option(2, ge=0, le=100)
    # no fact of the asked relation: its reverse reading, then the second-best relation
    relax: bool = client_option(True)
    # ... then any relation between the same entities (a guess, ~24% right on MultiTQ; on: higher Hits@1,
    # lower accuracy on answered — see bench/RESULTS.md)
    any_relation: bool = client_option(False)
    max_evidence: int = client_option(50, ge=0, le=10_000)
    cache_size: int = 8


class SymbolicReasoner(Method):
    """Deterministic parser + executor (:class:`tkgqa.query.Reasoner`) as a method."""

    name = "symbolic"

    config_class = SymbolicConfig
    config: SymbolicConfig

    def setup(self) -> None:
        options = options_from(ParserOptions, self.config)
        c = self.config
        self.reasoner = Reasoner(options, max_evidence=c.max_evidence, cache_size=c.cache_size)

    def parse(self, question: Question | str, kg: KGStore) -> Parse:
        """The program for ``question`` over ``kg`` (or why there is none)."""
        return self.reasoner.parse(question, kg)

    def reason(self, question: Question, kg: KGStore) -> Answer:
        store = self.reasoner.store_for(question, kg)
        parsed = self.reasoner.parse(question, store)
        trace: list[TraceStep] = [ParseStep(parsed.info)]
        if parsed.program is None:
            return Answer.abstain(parsed.reason, trace=trace)
        return self.execute(parsed.program, store, trace, priority=Reasoner.context_priority(question))

    def execute(
        self,
        program: Program,
        kg: KGStore,
        trace: list[TraceStep] | None = None,
        *,
        priority: dict[Fact, int] | None = None,
    ) -> Answer:
        """Run a program over ``kg``; ``priority`` (fact → rank) breaks ties between equally good answers."""
        result = self.reasoner.execute(program, kg, priority=priority)
        steps: list[TraceStep] = [ProgramStep(pretty(program)), *(trace or []), *result.steps]
        if not result.answers:
            return Answer.abstain(
                AbstainReason.PROGRAM_NO_ANSWER.note(), trace=steps, evidence=result.evidence
            )
        return Answer(answers=result.answers, evidence=result.evidence, trace=steps)
