"""An LPKG answer's trace is typed (issue #30): every step an instance of a step class of
:mod:`tkgqa.methods.lpkg.steps`, none a ``RecordedStep``, and read back from its JSON form as the same
classes (the plan, every plan-line kind, the paper preset's ``empty_fallback``, the direct-plan fallback)."""

from __future__ import annotations

import re

from lpkg_plans import COMPARE_PLAN, IN_PLAN

from tkgqa.datasets import Question
from tkgqa.kg import TemporalKG
from tkgqa.llm.base import LLMRequest
from tkgqa.methods import resolve_method
from tkgqa.methods.base import Answer, RefusedStep
from tkgqa.methods.lpkg import LPKGMethod
from tkgqa.methods.lpkg.steps import (
    ApplyCall,
    CallError,
    CombineCall,
    EmptyFallbackStep,
    GetAnswerCall,
    PlanStep,
    SearchCall,
)
from tkgqa.testing import FakeLLM
from tkgqa.trace import RecordedStep, TraceStep, read_trace

AND_PLAN = """Sub_Question_1 = "Who visited China?"
Info_1 = Search(query=Sub_Question_1)
Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)
Sub_Question_2 = "Who visited Germany?"
Info_2 = Search(query=Sub_Question_2)
Ans_2 = Get_Answer(query=Sub_Question_2, info=Info_2)
Ans_3 = Intersection(Answer1=Ans_1, Answer2=Ans_2)
Ans_4 = First(Answer=Ans_3)
Final_Answer = Finish_The_Plan(Answer=Ans_4)"""

PAPER_CHAIN_PLAN = """Sub_Question_1: str = "Who visited China in November 2014?"
Info_1: str = Search(query = Sub_Question_1)
Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)
Sub_Question_2: str = f"Which countries did {Ans_1} visit?"
Info_2: str = Search(query = Sub_Question_2)
Ans_2: str = Get_Answer(query = Sub_Question_2, info = Info_2)
Final_Answer: str = Finish_The_Plan(Answer = Ans_2)"""

QUESTION = Question(qid="q1", text="Who visited China in November 2014?", answers=["Barack Obama"])
COMPARE_Q = Question(qid="c", text="Who visited China first, Angela Merkel or Vladimir Putin?")
CHAIN_Q = Question(qid="q2", text="Which countries did the visitor of China in November 2014 visit?")


def typed(answer: Answer) -> list[type[TraceStep]]:
    """The classes of ``answer``'s steps, checked typed and read back from JSON as the same classes."""
    kinds = [type(s) for s in answer.trace]
    assert answer.trace and all(isinstance(s, TraceStep) for s in answer.trace)
    assert not any(isinstance(s, RecordedStep) for s in answer.trace)
    written = answer.to_dict()["trace"]
    assert all(type(s) is dict for s in written)
    back = read_trace(written)
    assert [type(s) for s in back] == kinds
    assert [s.to_dict() for s in back] == written and back == list(answer.trace)
    return kinds


def test_each_plan_line_kind_is_a_typed_step(demo_kg: TemporalKG) -> None:
    answer = resolve_method("lpkg", preset="ours", llm=FakeLLM([IN_PLAN]), k=2).answer(QUESTION, demo_kg)
    assert answer.answers == ["Barack Obama"]
    assert typed(answer) == [PlanStep, SearchCall, GetAnswerCall, ApplyCall, ApplyCall]
    plan, search, read, during, finish = answer.trace
    assert isinstance(plan, PlanStep) and plan.parsed and plan.planner == "icl" and not plan.fallback
    assert list(plan) == [
        "step",
        "planner",
        "text",
        "parsed",
        "error",
        "shape",
        "pattern",
        "fallback",
        "seconds",
    ]
    assert isinstance(search, SearchCall) and search.var == "Info_1" and search.n_facts > 0
    assert list(search) == ["step", "call", "queries", "n_facts", "how", "evidence"]
    assert isinstance(read, GetAnswerCall) and read.queries == ["Who visited China?"]
    assert list(read) == ["step", "call", "queries", "answers", "n_answers", "evidence"]
    assert isinstance(during, ApplyCall) and (during.call, during.input) == ("During", "Ans_1")
    assert isinstance(finish, ApplyCall) and finish.call == "Finish_The_Plan"
    assert list(finish) == ["step", "call", "input", "answers", "n_answers", "evidence"]

    compare = resolve_method("lpkg", preset="ours", llm=FakeLLM([COMPARE_PLAN]), k=2).answer(
        COMPARE_Q, demo_kg
    )
    kinds = typed(compare)
    (cmp,) = [s for s in compare.trace if isinstance(s, CombineCall)]
    assert kinds[-2] is CombineCall and cmp.call == "Compare" and cmp.inputs == ["Ans_1", "Ans_2"]
    assert list(cmp) == ["step", "call", "inputs", "answers", "n_answers", "evidence"]

    both = resolve_method("lpkg", preset="ours", llm=FakeLLM([AND_PLAN]), k=2).answer(QUESTION, demo_kg)
    assert CombineCall in typed(both)
    assert [s.call for s in both.trace if isinstance(s, CombineCall | ApplyCall)] == [
        "Intersection",
        "First",
        "Finish_The_Plan",
    ]


def test_fallbacks_are_typed_steps(demo_kg: TemporalKG) -> None:
    unparsed = resolve_method("lpkg", preset="ours", llm=FakeLLM(["no plan here"]), k=2)
    fallback = unparsed.answer(QUESTION, demo_kg)
    assert typed(fallback)[0] is PlanStep
    plan = fallback.trace[0]
    assert isinstance(plan, PlanStep) and plan.fallback and not plan.parsed and plan.shape is None

    seen: dict[str, int] = {}

    def respond(request: LLMRequest) -> str:
        text = request.messages[-1].content
        if text.startswith("###Complete the Code Below###"):
            return PAPER_CHAIN_PLAN
        m = re.search(r"### Question:\n(.*)\n### Your Answer", text)
        assert m is not None, text[:300]
        seen[m.group(1)] = seen.get(m.group(1), 0) + 1
        return "[None]" if m.group(1) == QUESTION.text else "[Germany#China]"

    answer = LPKGMethod(llm=FakeLLM(respond)).answer(CHAIN_Q, demo_kg)
    kinds = typed(answer)
    assert EmptyFallbackStep in kinds
    (empty,) = [s for s in answer.trace if isinstance(s, EmptyFallbackStep)]
    assert empty.reason == "Ans_1 is empty" and empty.to_dict() == {
        "step": "empty_fallback",
        "reason": empty.reason,
    }
    assert sorted(answer.answers) == ["China", "Germany"]


def test_a_step_that_cannot_run_is_a_call_error() -> None:
    step = CallError(var="Ans_2", error="Ans_2: KeyError: 'Info_9'")
    assert step.to_dict() == {"step": "Ans_2", "error": "Ans_2: KeyError: 'Info_9'"}
    # its JSON form is a RefusedStep's: a row's error step reads back as one, with the same JSON
    (back,) = read_trace([step.to_dict()])
    assert isinstance(back, RefusedStep) and back == step
