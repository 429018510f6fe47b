"""``llm_only``: the LLM answers from its parameters (the paper's ChatGPT baseline)."""

from __future__ import annotations

from pydantic import Field

from ...datasets.base import Question
from ...kg.base import KGStore
from ...llm import LLMBackend, answer_usage
from ...prompts.ask import Refused, ask
from ...prompts.base import Context, PromptSpec
from ...trace import TraceStep
from ..base import Answer, Method, MethodConfig, abstain_refused
from ..client import client_option
from .prompts import LLM_ONLY_PROMPT
from .steps import AnswerStep


class LLMOnlyConfig(MethodConfig):
    llm: str | None = None
    retries: int = Field(default=1, ge=0)
    max_tokens: int = client_option(64, ge=4, le=32_768)


def ask_for_answers(
    llm: LLMBackend,
    prompt: PromptSpec[list[str]],
    context: Context,
    retries: int,
    max_tokens: int,
    trace: list[TraceStep],
) -> Answer:
    """One prompt → a parsed answer list (shared by the single-prompt baselines). Unparsable output is an
    abstention; an :class:`~tkgqa.errors.LLMError` (the backend failed) propagates."""
    outcome = ask(llm, prompt, context, retries=retries, max_tokens=max_tokens)
    if isinstance(outcome, Refused):
        return abstain_refused(outcome, trace, outcome.usage, llm, entry=("type", "parse_failure"))
    trace.append(AnswerStep(outcome.value, outcome.attempts))
    return Answer(outcome.value, trace=trace, usage=answer_usage(outcome.usage, llm), raw_output=outcome.text)


class LLMOnly(Method):
    name = "llm_only"

    config_class = LLMOnlyConfig
    needs_llm = True
    config: LLMOnlyConfig
    llm: LLMBackend

    def reason(self, question: Question, kg: KGStore) -> Answer:
        context = {"question": question.text}
        return ask_for_answers(
            self.llm,
            LLM_ONLY_PROMPT,
            context,
            self.config.retries,
            self.config.max_tokens,
            [],
        )
