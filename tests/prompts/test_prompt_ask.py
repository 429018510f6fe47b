"""The one ask helper (:mod:`tkgqa.prompts.ask`): call, parse, re-ask, then a parsed value or a refusal
with a reason; an infrastructure failure propagates (charged with what the question spent before)."""

from __future__ import annotations

import pytest

from tkgqa.errors import ContextWindowError, LLMError, ParseError
from tkgqa.llm import LLMRequest, Message, Usage
from tkgqa.outcomes import AbstainReason
from tkgqa.prompts import Asker, Bound, Parsed, Prompt, PromptSpec, Refusal, Refused, ask, run_prompt
from tkgqa.prompts.ask import CONTEXT_WINDOW, UNPARSABLE, without_raw
from tkgqa.testing import FakeLLM


def _number(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ParseError("not a number", raw=text, expected="an integer") from None


NUMBER = Prompt("test.number", lambda ctx: [Message.user(f"How many {ctx['what']}?")], _number)


def _raising(exc: Exception):  # type: ignore[no-untyped-def]
    def respond(request: LLMRequest) -> str:
        raise exc

    return respond


def test_a_readable_reply_is_parsed_in_one_call() -> None:
    llm = FakeLLM([" 7 "])
    out = ask(llm, NUMBER, {"what": "days"}, max_tokens=8)
    assert isinstance(out, Parsed)
    assert (out.value, out.text, out.attempts) == (7, " 7 ", 1)
    assert out.usage.calls == 1 and out.usage.parse_failures == 0
    assert llm.requests[0].messages[-1].content == "How many days?"
    assert llm.requests[0].max_tokens == 8


def test_an_unreadable_reply_is_re_asked_with_the_reply_and_the_reason() -> None:
    llm = FakeLLM(["seven", "7"])
    out = ask(llm, NUMBER, {"what": "days"})
    assert isinstance(out, Parsed) and out.value == 7 and out.attempts == 2
    assert out.usage.calls == 2 and out.usage.parse_failures == 1
    second = llm.requests[1].messages
    assert second[-2].content == "seven"
    assert "could not be parsed: not a number" in second[-1].content
    assert "Expected an integer" in second[-1].content


@pytest.mark.parametrize("retries", [0, 1, 2])
def test_after_the_last_re_ask_the_outcome_is_a_refusal_with_the_reason_and_raw_text(retries: int) -> None:
    llm = FakeLLM(["a", "b", "c"])
    out = ask(llm, NUMBER, {"what": "days"}, retries=retries, reason="no count")
    assert isinstance(out, Refused)
    assert llm.calls == retries + 1
    assert out.reason == "no count" and out.kind is Refusal.UNPARSABLE
    assert out.raw == "abc"[retries]
    assert out.usage.calls == retries + 1 and out.usage.parse_failures == retries + 1
    tries = f"after {retries + 1} attempt(s)"
    assert out.brief == f"could not parse the model's output {tries}: not a number (expected an integer)"
    assert out.message == str(out.error)[:300]


def test_the_default_reason_is_unparsable_model_output() -> None:
    out = ask(FakeLLM(["x", "y"]), NUMBER, {"what": "days"})
    assert isinstance(out, Refused) and out.reason == UNPARSABLE == "unparsable model output"


def test_an_llm_error_propagates_charged_with_what_earlier_steps_spent() -> None:
    spent = Usage(calls=2, prompt_tokens=10)
    with pytest.raises(LLMError) as caught:
        ask(FakeLLM(_raising(LLMError("down", usage=Usage(calls=1)))), NUMBER, {"what": "days"}, spent=spent)
    assert caught.value.usage == Usage(calls=3, prompt_tokens=10)
    with pytest.raises(LLMError) as uncharged:
        ask(FakeLLM(_raising(LLMError("down", usage=Usage(calls=1)))), NUMBER, {"what": "days"})
    assert uncharged.value.usage == Usage(calls=1)


def test_a_context_window_overflow_is_an_error_unless_the_caller_refuses_it() -> None:
    overflow = ContextWindowError("too long", usage=Usage(calls=1))
    with pytest.raises(ContextWindowError):
        ask(FakeLLM(_raising(overflow)), NUMBER, {"what": "days"})
    out = ask(FakeLLM(_raising(ContextWindowError("too long"))), NUMBER, {"what": "days"}, window=True)
    assert isinstance(out, Refused)
    assert out.kind is Refusal.CONTEXT_WINDOW and out.reason == CONTEXT_WINDOW and out.raw == ""
    assert out.usage == Usage(calls=1)


def test_on_reject_hears_each_reply_the_parser_refused() -> None:
    seen: list[str] = []
    out = ask(
        FakeLLM(["a", "b", "3"]), NUMBER, {"what": "x"}, retries=2, on_reject=lambda e: seen.append(e.raw)
    )
    assert isinstance(out, Parsed) and out.value == 3
    assert seen == ["a", "b"]


def test_the_asker_sums_usage_and_collects_rejected_replies() -> None:
    asker = Asker(FakeLLM(["1", "x", "2", "y", "z"]), max_tokens=5, describe=without_raw)
    rejected: list[str] = []
    first = asker.ask(NUMBER, {"what": "a"})
    second = asker.ask(NUMBER, {"what": "b"}, rejected=rejected)
    third = asker.ask(NUMBER, {"what": "c"}, retries=0)
    assert isinstance(first, Parsed) and isinstance(second, Parsed) and isinstance(third, Refused)
    assert rejected == ["not a number (expected an integer)"]
    assert asker.usage.calls == 4 and asker.usage.parse_failures == 2
    assert asker.usage == first.usage + second.usage + third.usage


def test_a_bound_prompt_is_a_prompt_spec_and_run_prompt_raises_a_refusal() -> None:
    bound = Bound("test.bound", [Message.user("How many?")], _number)
    assert isinstance(bound, PromptSpec) and isinstance(NUMBER, PromptSpec)
    assert run_prompt(FakeLLM(["4"]), bound, {}).value == 4
    with pytest.raises(ParseError) as caught:
        run_prompt(FakeLLM(["x", "y"]), bound, {})
    assert caught.value.raw == "y"


def test_a_refusal_becomes_an_abstention_with_its_reason_raw_text_and_trace_entry() -> None:
    from tkgqa.methods.base import RefusedStep, abstain_refused, listed_answer
    from tkgqa.trace import TraceStep

    out = ask(FakeLLM(["x", "y"]), NUMBER, {"what": "days"}, reason="could not parse the answer")
    assert isinstance(out, Refused)
    trace: list[TraceStep] = []
    answer = abstain_refused(out, trace, out.usage, None, entry=("step", "answer"))
    assert answer.abstained and answer.raw_output == "y"
    assert answer.reason == AbstainReason.ANSWER_UNPARSED.note()
    assert trace == [RefusedStep("step", "answer", out.message)] and isinstance(answer.trace[0], RefusedStep)
    assert answer.to_dict()["trace"] == [{"step": "answer", "error": out.message}]
    assert answer.usage.to_dict()["llm_calls"] == 2 and answer.usage.to_dict()["parse_failures"] == 2
    empty = listed_answer([], "none", [], Usage(calls=1), None, empty="the model listed no answer")
    assert empty.abstained and empty.reason_text == "the model listed no answer"
    assert empty.raw_output == "none"
    found = listed_answer(["Paris"], "Paris", [], Usage(calls=1), None, empty="unused")
    assert not found.abstained and found.answers == ["Paris"] and found.usage.to_dict()["llm_calls"] == 1


def test_a_vote_samples_n_replies_and_reads_the_most_frequent() -> None:
    from tkgqa.prompts.ask import vote

    llm = FakeLLM(["7", " 8 ", "8", "7"])
    out = vote(llm, NUMBER, {"what": "days"}, 4, temperature=0.7, max_tokens=5)
    assert isinstance(out, Parsed)
    assert (out.value, out.text, out.attempts) == (7, "7", 4)  # a tie: the first reply to reach the top count
    assert out.usage.calls == 4 and out.usage.parse_failures == 0
    assert [r.seed for r in llm.requests] == [0, 1, 2, 3]
    assert {(r.temperature, r.max_tokens) for r in llm.requests} == {(0.7, 5)}


def test_an_unreadable_winning_vote_is_a_refusal_not_a_re_ask() -> None:
    from tkgqa.prompts.ask import vote

    llm = FakeLLM(["many", "many", "3"])
    out = vote(llm, NUMBER, {"what": "days"}, 3, temperature=1.0, reason="no count")
    assert isinstance(out, Refused) and out.reason == "no count" and out.raw == "many"
    assert llm.calls == 3 and out.usage.calls == 3 and out.usage.parse_failures == 1
    with pytest.raises(LLMError):
        vote(FakeLLM(_raising(LLMError("down"))), NUMBER, {"what": "days"}, 2, temperature=1.0)
    from tkgqa.errors import ConfigError

    with pytest.raises(ConfigError):
        vote(FakeLLM(["1"]), NUMBER, {"what": "days"}, 0, temperature=1.0)
