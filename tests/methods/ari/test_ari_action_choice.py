"""ARI's action choice reads what the model chose or refuses it with a reason — never another action
(issue 19) — and accepts the ARI authors' ``$f(a,b,c)$`` notation with ``{your specified time}``."""

from __future__ import annotations

from typing import Any

import pytest

from tkgqa.datasets.base import Question
from tkgqa.errors import ParseError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods.ari import ARIMethod
from tkgqa.methods.ari.prompts import (
    ActionChoice,
    ActionRefusal,
    ActionRefused,
    build_action_messages,
    parse_action_choice,
    parse_constrained_choice,
)
from tkgqa.testing import FakeLLM
from tkgqa.time import parse_time

OURS = ["get_after({entities}, 2012)", "get_after({entities}, 2016)", "get_last({entities})"]
AUTHORS = [
    "$get_tail_entity(Roberto Colombo,member of sports team,no time constraints)$",
    "$answer(A.C. Milan)$",
    "$get_after({entities},{your specified time})$",
    "$get_between({entities},{your specified start time},{your specified end time})$",
    "$get_head_entity(Sunderland A.F.C.,head coach,no time constraints)$",
]


def refusal(text: str, actions: list[str], **kw: bool) -> ActionRefusal:
    with pytest.raises(ActionRefused) as info:
        parse_action_choice(text, actions, **kw)
    assert info.value.raw == text
    return info.value.refusal


def test_an_action_not_offered_is_refused_never_replaced() -> None:
    assert refusal("Action: $get_after({entities}, 2014)$", OURS) is ActionRefusal.NOT_OFFERED
    text = "Action: $get_tail_entity(Sunderland A.F.C., head coach, no time constraints)$\nReason: coaches"
    assert refusal(text, AUTHORS) is ActionRefusal.NOT_OFFERED  # get_head_entity is offered, not this
    assert refusal("Action: $get_after(ENTITY_LIST, SPECIFIED_TIME)$", AUTHORS) is ActionRefusal.NOT_OFFERED
    # the explicit action wins over an offered action mentioned in the reason
    assert refusal("Action: $get_after({entities}, 2014)$\nReason: not get_last({entities})", OURS) is (
        ActionRefusal.NOT_OFFERED
    )
    assert refusal("Action: 7", OURS) is ActionRefusal.BAD_INDEX
    assert refusal("I am not sure.", OURS) is ActionRefusal.NO_ACTION
    assert refusal("either get_after({entities}, 2012) or get_last({entities})", OURS) is (
        ActionRefusal.AMBIGUOUS
    )
    assert refusal("$answer(Carol)$", OURS, allow_free_answer=False) is ActionRefusal.FREE_ANSWER


def test_offered_actions_are_read_up_to_spacing_and_case() -> None:
    assert parse_action_choice("Action: $get_after({entities}, 2012)$", OURS) == ActionChoice(index=0)
    assert parse_action_choice("Action:\n$Get_Last( {entities} )$", OURS) == ActionChoice(index=2)
    text = "Action: $get_tail_entity(Roberto Colombo, member of sports team, no time constraints)$"
    assert parse_action_choice(text, AUTHORS) == ActionChoice(index=0)
    assert parse_action_choice("Action: 3", OURS) == ActionChoice(index=2)
    assert parse_action_choice("I would use get_last({entities}) now.", OURS) == ActionChoice(index=2)


def test_the_authors_placeholders_are_filled_with_the_models_time() -> None:
    choice = parse_action_choice("Action: $get_after({entities}, 1801)$\nReason: after 1801", AUTHORS)
    assert choice == ActionChoice(index=2, filled=("1801",))
    assert choice.written(AUTHORS) == "get_after({entities},1801)"
    between = parse_action_choice("$get_between({entities}, 1990-05, 1995)$", AUTHORS)
    assert between.filled == ("1990-05", "1995")
    assert between.written(AUTHORS) == "get_between({entities},1990-05,1995)"
    for bad in ("$get_after({entities}, {15th century})$", "$get_after({entities},{your specified time})$"):
        assert refusal(bad, AUTHORS) is ActionRefusal.BAD_TIME
    assert parse_action_choice("$answer(A.C. Milan)$", AUTHORS).written(AUTHORS) == "answer(A.C. Milan)"
    assert parse_action_choice("$answer(Calcio Padova)$", AUTHORS).written(AUTHORS) == "answer(Calcio Padova)"


def test_constrained_choice_is_exact() -> None:
    assert parse_constrained_choice(" get_last({entities}) ", OURS) == ActionChoice(index=2)
    with pytest.raises(ParseError):
        parse_constrained_choice("get_after({entities}, 2013)", OURS)  # no nearest year


def test_the_prompt_asks_for_a_time_only_where_an_action_has_a_placeholder() -> None:
    ours = build_action_messages("Who?", OURS)[0].content
    assert "{your specified time}" not in ours
    authors = build_action_messages("Who?", [a.strip("$") for a in AUTHORS])[0].content
    assert "Replace {your specified time} with a specified time" in authors


# --- the policy: a refused action is re-asked once, then the step abstains; the trace says which ----------
def _kg() -> TemporalKG:
    t = parse_time
    return TemporalKG(
        [Fact(who, "Make a visit", "Freedonia", t(day), t(day))
         for who, day in (("Alice", "2010-01-05"), ("Bob", "2011-03-02"), ("Carol", "2012-07-20"))],
        name="tiny",
    )  # fmt: skip


NOT_OFFERED = "Action: $get_tail_entity(Freedonia, Make a visit, 2099)$"
LOOKUP = "Action: $get_head_entity(Freedonia, Make a visit, no time constraints)$"


def _steps(answer: Any) -> list[dict[str, Any]]:
    return [t for t in answer.trace if t["type"] == "step"]


def test_a_refused_action_is_re_asked_once() -> None:
    llm = FakeLLM([NOT_OFFERED, LOOKUP, "Action: $answer(Bob)$"])
    ans = ARIMethod(llm=llm, preset="ours").answer(Question(qid="q", text="Who visited Freedonia?"), _kg())
    first = _steps(ans)[0]
    assert first["action"] == "get_head_entity(Freedonia, Make a visit, no time constraints)"
    assert (
        first["note"].startswith("re-asked after a refused reply")
        and "not one of the offered" in first["note"]
    )
    assert "is not one of the offered actions" in llm.requests[1].messages[-1].content
    assert ans.answers[0] == "Bob"


def test_refused_twice_the_step_abstains_with_the_reason() -> None:
    llm = FakeLLM([NOT_OFFERED, NOT_OFFERED])
    ans = ARIMethod(llm=llm, preset="ours", fallback_answer=False).answer(
        Question(qid="q", text="Who visited Freedonia?"), _kg()
    )
    (step,) = _steps(ans)
    assert step["action"] is None and step["parse_failed"] is True and llm.calls == 2
    assert step["note"].startswith("refused (re-asked 1 time(s), the step abstains)")
    assert "get_tail_entity(Freedonia, Make a visit, 2099)" in step["note"] and ans.abstained
    paper = ARIMethod(llm=FakeLLM([NOT_OFFERED]), fallback_answer=False)  # the paper preset: no retry
    (once,) = _steps(paper.answer(Question(qid="q", text="Who visited Freedonia?"), _kg()))
    assert once["note"].startswith("refused (not re-asked, the step abstains)")
