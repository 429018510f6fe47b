"""``llm_only``: the LLM answers from its parameters (the paper's ChatGPT baseline)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ...datasets.base import Question
from ...errors import ParseError
from ...kg.base import KGStore
from ...llm import LLMBackend, Message, complete_parsed, error_usage, llm_context, usage_dict
from ...prompts.baselines import build_llm_only_messages, parse_answer_list
from ..base import METHODS, Answer, Method, MethodConfig


class LLMOnlyConfig(MethodConfig):
    llm: str | None = None
    retries: int = Field(default=1, ge=0)
    max_tokens: int = Field(default=64, ge=4)


def ask_for_answers(
    method: Method,
    llm: LLMBackend,
    question: Question,
    messages: list[Message],
    retries: int,
    max_tokens: int,
    trace: list[dict[str, Any]],
) -> Answer:
    """One prompt → a parsed answer list (shared by the single-prompt baselines). Unparsable output is an
    abstention; an :class:`~tkgqa.errors.LLMError` (the backend failed) propagates."""
    with llm_context(method=method.name, question_id=question.qid):
        try:
            parsed = complete_parsed(llm, messages, parse_answer_list, retries=retries, max_tokens=max_tokens)
        except ParseError as exc:
            trace.append({"type": "parse_failure", "error": str(exc)[:300]})
            return Answer.abstain(
                "unparsable model output",
                trace=trace,
                usage=usage_dict(error_usage(exc), llm),
                raw_output=exc.raw,
            )
    trace.append({"type": "answer", "answers": parsed.value, "attempts": parsed.attempts})
    return Answer(parsed.value, trace=trace, usage=usage_dict(parsed.usage, llm), raw_output=parsed.text)


@METHODS.register("llm_only")
class LLMOnly(Method):
    name = "llm_only"

    config_class = LLMOnlyConfig
    needs_llm = True
    config: LLMOnlyConfig
    llm: LLMBackend

    def answer(self, question: Question, kg: KGStore) -> Answer:
        messages = build_llm_only_messages(question.text)
        return ask_for_answers(
            self, self.llm, question, messages, self.config.retries, self.config.max_tokens, []
        )
