"""TimeR4 prompts (Qian et al., Appendix A): rewriting (Figure 5) and reasoning (Figure 6), verbatim.

* :data:`REWRITE_PROMPT` — context ``question`` and ``facts`` (facts shown as ``[S, R, O, T]`` like the
  figure's example); parses the rewritten question (first non-empty line, ``Question:`` prefixes and quotes
  stripped).
* :data:`REASON_PROMPT` — context ``question`` and ``facts`` (sentences, shown as a list as in the reference
  code's instruction data); parses the answer list with the shared answer-list parser (no eval).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ...errors import ParseError
from ...llm.base import Message
from ...llm.parsing import parse_answer_list
from ...prompts.base import Context, Prompt

REWRITE_TEMPLATE = (
    "Replace the temporal fact in questions with explicit timestamps from the provided facts or your "
    "knowledge without any explanation. If you are not sure about the answer, return the original "
    "questions.\n"
    'For instance, from the fact: "[Juan Carlos I, Praise or endorse, Vietnam, 2006-02-22]", We can modify '
    'the question: "After Vietnam, who was the first to praise Juan Carlos I?" to "After 2006-02-22, who '
    'was the first to praise Juan Carlos I?"\n'
    "Here is your turn:\n"
    "Facts: {facts}\n"
    "Question: {question}"
)

REASON_TEMPLATE = (
    "Based on the historical facts, please answer the given question. Please keep the answer as simple as "
    "possible and return all the possible answers as a list.\n"
    "Historical facts: {facts}\n"
    "Question: {question}"
)


def quadruple_text(parts: Sequence[str]) -> str:
    """``[Juan Carlos I, Praise or endorse, Vietnam, 2006-02-22]`` (Figure 5's fact notation)."""
    return "[" + ", ".join(parts) + "]"


def rewrite_text(question: str, facts: Sequence[str]) -> str:
    return REWRITE_TEMPLATE.format(facts=" ".join(facts), question=question)


def reason_text(question: str, facts: Sequence[str]) -> str:
    return REASON_TEMPLATE.format(facts=json.dumps(list(facts), ensure_ascii=False), question=question)


def build_rewrite(context: Context) -> list[Message]:
    return [Message.user(rewrite_text(context["question"], context["facts"]))]


def build_reason(context: Context) -> list[Message]:
    return [Message.user(reason_text(context["question"], context["facts"]))]


_PREFIX = re.compile(r"^(?:(?:modified|rewritten|new|explicit)\s+)?question\s*[:：]\s*", re.IGNORECASE)


def parse_rewrite(text: str) -> str:
    """The rewritten question: first non-empty line, without a ``Question:`` prefix or surrounding quotes."""
    for line in text.strip().splitlines():
        line = _PREFIX.sub("", line.strip()).strip().strip("\"'“”`").strip()
        if line:
            return line
    raise ParseError("empty rewrite", raw=text, expected="the rewritten question")


def parse_answers(text: str) -> list[str]:
    """All answers the model listed (``['a', 'b']``, bullets, lines or a comma-separated line), read by the
    shared answer-list parser."""
    return parse_answer_list(text)


REWRITE_PROMPT: Prompt[str] = Prompt("timer4.rewrite", build_rewrite, parse_rewrite)
REASON_PROMPT: Prompt[list[str]] = Prompt("timer4.reason", build_reason, parse_answers)
