"""The ARI agent loop with each policy: FakeLLM (parse paths, retries, t_max, answer), the oracle search on a
hand-written KG, and the symbolic policy end to end on the bundled demo KG."""

from __future__ import annotations

from typing import Any

import pytest

from tkgqa.datasets.base import Question
from tkgqa.errors import ConfigError, LLMError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.llm.base import LLMBackend, LLMRequest, LLMResponse
from tkgqa.methods import resolve_method
from tkgqa.methods.ari import ARIMethod
from tkgqa.query.program.nodes import ReferenceTime
from tkgqa.query.text.frame import asked_granularity
from tkgqa.testing import FakeLLM
from tkgqa.time import Extreme, Granularity, TemporalRelation, parse_time

# A hand-written KG (invented names): visits to Freedonia, criticism of Freedonia, one agreement.
FACTS = [
    Fact.of("Alice", "Make a visit", "Freedonia", "2010-01-05"),
    Fact.of("Bob", "Make a visit", "Freedonia", "2011-03-02"),
    Fact.of("Carol", "Make a visit", "Freedonia", "2012-07-20"),
    Fact.of("Bob", "Make a visit", "Freedonia", "2013-02-11"),
    Fact.of("Dave", "Make a visit", "Freedonia", "2014-09-09"),
    Fact.of("Alice", "Criticize", "Freedonia", "2012-08-01"),
    Fact.of("Erin", "Criticize", "Freedonia", "2013-05-05"),
    Fact.of("Freedonia", "Sign agreement", "Sylvania", "2011-05-05"),
]


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG(FACTS, name="tiny")


def q(text: str, answers: list[str] | None = None, qid: str = "q1") -> Question:
    return Question(qid=qid, text=text, answers=answers or [])


def steps(answer: Any) -> list[dict[str, Any]]:
    return [t for t in answer.trace if t["type"] == "step"]


# --- LLM policy ------------------------------------------------------------------------------------------
def test_llm_policy_runs_until_answer(kg: TemporalKG) -> None:
    llm = FakeLLM(
        [
            "Action:\n$get_head_entity(Freedonia, Make a visit, no time constraints)$\nReason: who visited",
            "Action: $get_first({entities})$",
            "Action: $answer(Alice)$",
        ]
    )
    method = ARIMethod(llm=llm)
    ans = method.answer(q("Who was the first to visit Freedonia?"), kg)
    assert ans.answers[0] == "Alice"
    assert [s["action"] for s in steps(ans)] == [
        "get_head_entity(Freedonia, Make a visit, no time constraints)",
        "get_first({entities})",
        "answer(Alice)",
    ]
    assert steps(ans)[0]["candidates"] and "entities = [" in steps(ans)[0]["result"]
    assert ans.trace[0]["entities"] == ["Freedonia"] and ans.trace[-1]["stop"] == "answer"
    assert (
        ans.usage.to_dict()["llm_calls"] == 3
        and ans.usage.to_dict()["prompt_tokens"] > 0
        and ans.usage.to_dict()["parse_failures"] == 0
    )
    assert ans.evidence[0] == FACTS[0]
    assert "Response 0: entities = [" in llm.requests[1].messages[-1].content  # result fed back


def test_t_max_stops_the_loop_and_falls_back_to_the_current_list(kg: TemporalKG) -> None:
    llm = FakeLLM(lambda req: "Action: 1")  # always the first listed action, never an answer
    ans = ARIMethod(llm=llm, t_max=2, preset="ours").answer(q("Who visited Freedonia?"), kg)
    assert llm.calls == 2 and ans.trace[-1]["stop"] == "t_max" and ans.trace[-1]["forced"] is True
    assert ans.answers and ans.answers[0] in {"Alice", "Bob", "Carol", "Dave"}
    no_fallback = ARIMethod(
        llm=FakeLLM(lambda req: "Action: 1"), t_max=2, preset="ours", fallback_answer=False
    )
    assert no_fallback.answer(q("Who visited Freedonia?"), kg).abstained
    # the paper's loop (Algorithm 1) breaks at t_max without an answer: no forced answer by default
    paper = ARIMethod(llm=FakeLLM(lambda req: "Action: 1"), t_max=2)
    assert paper.config.fallback_answer is False
    assert paper.answer(q("Who visited Freedonia?"), kg).abstained


def test_parse_failure_without_retry_in_the_paper_preset(kg: TemporalKG) -> None:
    llm = FakeLLM(["I do not know.", "$answer(Bob)$"])
    ans = ARIMethod(llm=llm).answer(q("Who visited Freedonia?"), kg)
    assert llm.calls == 1 and ans.abstained and ans.usage.to_dict()["parse_failures"] == 1


def test_parse_failure_after_one_retry_is_recorded_and_stops(kg: TemporalKG) -> None:
    llm = FakeLLM(["I do not know.", "Still no idea."])
    ans = ARIMethod(llm=llm, retries=1).answer(q("Who visited Freedonia?"), kg)
    assert llm.calls == 2 and ans.abstained and "parse_failure" in ans.reason_text
    assert ans.usage.to_dict()["parse_failures"] == 2 and ans.usage.to_dict()["llm_calls"] == 2
    (step,) = steps(ans)
    assert step["parse_failed"] is True and step["action"] is None and step["raw_output"] == "Still no idea."
    assert "could not be parsed" in llm.requests[1].messages[-1].content  # the retry explains the error


def test_retry_recovers_from_one_bad_output(kg: TemporalKG) -> None:
    llm = FakeLLM(["hmm", "$get_head_entity(Freedonia, Make a visit, no time constraints)$", "$answer(Bob)$"])
    ans = ARIMethod(llm=llm, preset="ours").answer(q("Who visited Freedonia?"), kg)
    assert (
        ans.answers[0] == "Bob"
        and ans.usage.to_dict()["parse_failures"] == 1
        and ans.usage.to_dict()["llm_calls"] == 3
    )


def test_constrained_mode_sends_the_candidates_as_choices(kg: TemporalKG) -> None:
    llm = FakeLLM()  # answers choices[0]
    ans = ARIMethod(llm=llm, choice_mode="constrained", t_max=3).answer(q("Who visited Freedonia?"), kg)
    first = llm.requests[0]
    assert first.choices and first.choices[0] == steps(ans)[0]["action"]
    assert "Available Actions:\n1." not in first.messages[-1].content


def test_free_answer_is_accepted_and_marked(kg: TemporalKG) -> None:
    llm = FakeLLM(
        ["$get_head_entity(Freedonia, Make a visit, no time constraints)$", "Action: $answer(Zed)$"]
    )
    ans = ARIMethod(llm=llm).answer(q("Who visited Freedonia?"), kg)
    assert ans.answers[0] == "Zed" and steps(ans)[-1]["free_answer"] is True


class BrokenLLM(LLMBackend):
    name = "broken"

    def complete(self, request: LLMRequest) -> LLMResponse:
        raise LLMError("backend down")


def test_llm_errors_propagate(kg: TemporalKG) -> None:
    """A backend failure is an error of the question (issue #12), never an abstention."""
    with pytest.raises(LLMError, match="backend down"):
        ARIMethod(llm=BrokenLLM()).answer(q("Who visited Freedonia?"), kg)


def test_no_linked_entity_abstains(kg: TemporalKG) -> None:
    ans = ARIMethod(llm=FakeLLM([])).answer(q("What is the meaning of life?"), kg)
    assert ans.abstained and "no KG entity" in ans.reason_text


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="needs an LLM"):
        ARIMethod(policy="llm")
    expected = r"option policy='psychic' of the ari method: .*; write policy=llm\|symbolic\|oracle"
    with pytest.raises(ConfigError, match=expected):
        ARIMethod(policy="psychic")
    assert resolve_method("ari:oracle").config.policy == "oracle"  # type: ignore[attr-defined]
    m = resolve_method("ari:policy=symbolic,top_k=4,no_filter=true")
    assert (m.config.top_k, m.config.no_filter) == (4, True)  # type: ignore[attr-defined]


def test_calls_are_logged_with_the_question_id(kg: TemporalKG) -> None:
    from tkgqa.llm.cache import LLMCache

    ans = ARIMethod(llm="fake", choice_mode="constrained", t_max=2).answer(
        q("Who visited Freedonia?", qid="log-1"), kg
    )
    rows = [r for r in LLMCache().calls(method="ari") if r["question_id"] == "log-1"]
    assert len(rows) == ans.usage.to_dict()["llm_calls"] == 2


def test_asked_granularity() -> None:
    assert asked_granularity("In which month did Alice visit Freedonia?") == Granularity.MONTH
    assert asked_granularity("When did Alice visit?") == Granularity.DAY
    assert asked_granularity("Which year did Bob leave?") == Granularity.YEAR
    assert asked_granularity("Who visited Freedonia?") is None


# --- oracle ----------------------------------------------------------------------------------------------
def test_oracle_finds_a_before_last_path(kg: TemporalKG) -> None:
    ans = ARIMethod(policy="oracle").answer(q("Who last visited Freedonia before Carol?", ["Bob"]), kg)
    assert ans.answers[0] == "Bob"
    actions = [s["action"] for s in steps(ans)]
    assert actions[-1] == "answer(Bob)" and len(actions) <= 5


def test_oracle_time_answer_and_unreachable_gold(kg: TemporalKG) -> None:
    when = ARIMethod(policy="oracle").answer(
        q("In which month did Erin criticize Freedonia?", ["2013-05"]), kg
    )
    assert when.answers[0] == "2013-05"
    lost = ARIMethod(policy="oracle").answer(q("Who visited Freedonia?", ["Zed"]), kg)
    assert lost.abstained and "not reachable" in steps(lost)[0]["note"]
    blind = ARIMethod(policy="oracle").answer(q("Who visited Freedonia?"), kg)
    assert blind.abstained  # no gold, no oracle


def test_oracle_respects_t_max(kg: TemporalKG) -> None:
    question = q("Who last visited Freedonia before Carol?", ["Bob"])
    assert ARIMethod(policy="oracle", t_max=1).answer(question, kg).abstained
    assert not ARIMethod(policy="oracle", t_max=4).answer(question, kg).abstained


# --- symbolic policy on the demo KG ------------------------------------------------------------------------
def test_symbolic_policy_end_to_end_on_the_demo_kg(demo_kg: TemporalKG) -> None:
    from tkgqa.datasets.demo import load_demo_questions

    method = ARIMethod(policy="symbolic")
    questions = load_demo_questions()
    answered = 0
    for question in questions[:20]:
        ans = method.answer(question, demo_kg)
        assert ans.trace[0]["type"] == "setup" and ans.trace[-1]["type"] == "final"
        assert ans.usage.to_dict()["llm_calls"] == 0
        for step in steps(ans):
            assert {"step", "candidates", "action", "result", "n_results"} <= set(step)
            if step["action"] is not None and not step.get("free_answer"):
                assert step["action"] in step["candidates"]
        answered += not ans.abstained
    assert answered >= 10
    first = method.answer(questions[0], demo_kg)  # "Who visited China in November 2014?"
    assert first.answers[0] == "Barack Obama" and steps(first)[0]["note"] == "symbolic plan"


def test_compile_program_maps_the_program_to_actions() -> None:
    from tkgqa.methods.ari.symbolic_policy import UnsupportedProgram, compile_program
    from tkgqa.query.program.nodes import Const, Entities, Filter, Match, Select, TimeOf, Times

    ref = TimeOf(Match("Carol", "Make a visit", "Freedonia"), ReferenceTime.FIRST)
    program = Entities(
        Select(Filter(Match(None, "Make a visit", "Freedonia"), TemporalRelation.BEFORE, ref), Extreme.LAST)
    )
    (plan,) = compile_program(program)
    assert [s.kind for s in plan] == [
        "get_time",
        "mark_anchor",
        "get_head_entity",
        "get_before",
        "get_last",
        "answer",
    ]
    timed = compile_program(
        Times(
            Filter(Match("Alice", "Make a visit", None), TemporalRelation.IN, Const(parse_time("2010"))),
            Granularity.MONTH,
        )
    )
    assert timed[0][0].kind == "get_tail_entity" and timed[0][0].time == parse_time("2010")
    assert timed[0][-1].answer_time
    with pytest.raises(UnsupportedProgram):
        compile_program(Entities(Select(Match(None, "Make a visit", "Freedonia"), Extreme.FIRST, 3)))


def test_symbolic_policy_on_the_tiny_kg(kg: TemporalKG) -> None:
    from tkgqa.methods.ari.agent import run_episode
    from tkgqa.methods.ari.environment import ARIEnvironment
    from tkgqa.methods.ari.symbolic_policy import SymbolicPolicy
    from tkgqa.query.link import QuestionLinker
    from tkgqa.query.program.nodes import Entities, Filter, Match, Select, TimeOf
    from tkgqa.retrieval.similarity import Similarity

    question = q("Who last visited Freedonia before Carol?")
    linked = QuestionLinker.anchors().link(question, kg)
    env = ARIEnvironment(kg, linked.anchors, Similarity(question.text, None))
    ref = TimeOf(Match("Carol", "Make a visit", "Freedonia"), ReferenceTime.FIRST)
    program = Entities(
        Select(Filter(Match(None, "Make a visit", "Freedonia"), TemporalRelation.BEFORE, ref), Extreme.LAST)
    )
    ep = run_episode(question, env, SymbolicPolicy(program))
    assert ep.answers[0] == "Bob" and ep.stop_reason == "answer"
    assert [s.action for s in ep.steps] == [
        "get_time(Carol, Make a visit, Freedonia)",
        "get_head_entity(Freedonia, Make a visit, no time constraints)",
        "get_before({entities}, 2012-07-20)",
        "get_last({entities})",
        "answer(Bob)",
    ]
    assert "Carol" in linked.anchors.entities and "Freedonia" in linked.anchors.entities


# --- step events (the service streams them) ----------------------------------------------------------------
def test_each_action_is_reported_in_order_with_its_result_size(kg: TemporalKG) -> None:
    from tkgqa.methods.base import StepEvent, StepKind, step_reporter

    llm = FakeLLM(
        [
            "Action:\n$get_head_entity(Freedonia, Make a visit, no time constraints)$\nReason: who visited",
            "Action: $get_first({entities})$",
            "Action: $answer(Alice)$",
        ]
    )
    events: list[StepEvent] = []
    with step_reporter(events.append):
        ans = ARIMethod(llm=llm).answer(q("Who was the first to visit Freedonia?"), kg)
    assert ans.answers[0] == "Alice"
    assert [(e.method, e.kind, e.index) for e in events] == [("ari", StepKind.ACTION, i) for i in range(3)]
    assert [e.label for e in events] == [s["action"] for s in steps(ans)]
    assert [e.count for e in events] == [s["n_results"] for s in steps(ans)]
    assert events[0].count == 5 and events[1].count == 1  # five visits, then the first one
    assert events[0].to_dict()["kind"] == "action" and "entities = [" in events[0].data["result"]


def test_a_policy_stop_is_reported_and_no_reporter_changes_nothing(kg: TemporalKG) -> None:
    from tkgqa.methods.base import StepEvent, StepKind, step_reporter

    events: list[StepEvent] = []
    with step_reporter(events.append):
        ans = ARIMethod(llm=FakeLLM(["I cannot tell."] * 3)).answer(q("Who visited Freedonia?"), kg)
    assert events and events[-1].kind == StepKind.STOP and events[-1].data["stop"] == ans.trace[-1]["stop"]
    plain = ARIMethod(llm=FakeLLM(["I cannot tell."] * 3)).answer(q("Who visited Freedonia?"), kg)
    assert plain.to_dict() == ans.to_dict()  # the hook is optional: same answer without a reporter


def test_a_cancelling_reporter_stops_the_episode_between_steps(kg: TemporalKG) -> None:
    from tkgqa.methods.base import StepCancelled, StepEvent, step_reporter

    llm = FakeLLM(lambda req: "Action: 1")
    seen: list[StepEvent] = []

    def cancel_after_first(event: StepEvent) -> None:
        if seen:
            raise StepCancelled("cancelled by the test")
        seen.append(event)

    with step_reporter(cancel_after_first), pytest.raises(StepCancelled, match="cancelled by the test"):
        ARIMethod(llm=llm, t_max=5).answer(q("Who visited Freedonia?"), kg)
    assert len(seen) == 1 and llm.calls == 2  # stopped after the second step, not at t_max
