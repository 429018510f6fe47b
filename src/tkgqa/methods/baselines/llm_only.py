"""``llm_only``: the LLM answers from its parameters (the paper's ChatGPT baseline)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ...datasets.base import Question
from ...errors import ParseError
from ...kg.base import KGStore
from ...llm import LLMBackend, Message, complete_parsed, error_usage, llm_context, resolve_llm_arg, usage_dict
from ...prompts.baselines import build_llm_only_messages, parse_answer_list
from ..base import METHODS, Answer, Method, MethodConfig, llm_required, merge_config
from ..client import client_option


class LLMOnlyConfig(MethodConfig):
    llm: str | None = None
    retries: int = Field(default=1, ge=0)
    max_tokens: int = client_option(64, ge=4, le=32_768)


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


def _llm_for(name: str, config: Any, llm: str | LLMBackend | None) -> LLMBackend:
    backend = llm if isinstance(llm, LLMBackend) else resolve_llm_arg(llm or config.llm)
    if backend is None:
        raise llm_required(name)
    return backend


@METHODS.register("llm_only")
class LLMOnly(Method):
    name = "llm_only"

    def __init__(
        self, config: LLMOnlyConfig | None = None, *, llm: str | LLMBackend | None = None, **overrides: Any
    ) -> None:
        overrides.pop("policy", None)  # the harness passes policy to every method; there is none here
        if isinstance(llm, str):
            overrides["llm"] = llm
        self.config: LLMOnlyConfig = merge_config(LLMOnlyConfig, config, overrides)
        self.llm = _llm_for(self.name, self.config, llm)

    def answer(self, question: Question, kg: KGStore) -> Answer:
        messages = build_llm_only_messages(question.text)
        return ask_for_answers(
            self, self.llm, question, messages, self.config.retries, self.config.max_tokens, []
        )
