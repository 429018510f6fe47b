"""Prompts of the paper's LLM baselines (ARI Appendix A.1): LLM only, KG-RAG, and the KB-interaction schema
block of CoT KB. Answers are parsed into a list of strings without evaluating the output."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import ParseError
from ..llm.base import Message
from ..llm.parsing import extract_json, parse_string_list

ANSWER_FORMAT = (
    'Reply with the answer as a JSON list of strings, e.g. ["Barack Obama"] or ["2014-11"], best answer '
    "first: entity names, or dates as YYYY, YYYY-MM or YYYY-MM-DD at the granularity the question asks for."
)


def build_llm_only_messages(question: str) -> list[Message]:
    """ChatGPT baseline: the question alone."""
    return [
        Message.system("You answer questions about world events and people."),
        Message.user(f"Question: {question}\n\n{ANSWER_FORMAT}\nAnswer:"),
    ]


def build_kg_rag_messages(question: str, facts: Sequence[str]) -> list[Message]:
    """KG-RAG baseline: up to 20 retrieved quadruples, then the question."""
    listed = "\n".join(f"- {f}" for f in facts) if facts else "(no facts found)"
    return [
        Message.system("You answer questions using facts from a temporal knowledge graph."),
        Message.user(
            "Facts (subject, relation, object, time) from a temporal knowledge graph:\n"
            f"{listed}\n\nUsing these facts, answer the question.\nQuestion: {question}\n\n"
            f"{ANSWER_FORMAT}\nAnswer:"
        ),
    ]


def build_schema_block(entities: Sequence[str], relations: Sequence[str], times: Sequence[str]) -> str:
    """What CoT KB is told about the KB instead of a list of actions: the linked entities, relation names of
    their 1-hop subgraph and the question's times."""
    return (
        f"Entities in the question: {', '.join(entities) or '(none)'}\n"
        f"Relations around them: {', '.join(relations) or '(none)'}\n"
        f"Times in the question: {', '.join(times) or '(none)'}\n"
        "Write your next action with one of the functions above, using these names exactly; use {entities} "
        "for the current entity list."
    )


_PREFIX = re.compile(r"^\s*(?:the\s+)?(?:final\s+)?answers?(?:\s+is)?\s*[:：]\s*", re.IGNORECASE)
_WORDISH = re.compile(r"\w")
_REFUSAL = re.compile(r"\b(i\s+(?:do\s+not|don't|cannot|can't)|unknown|no answer|not sure)\b", re.IGNORECASE)


def parse_answer_list(text: str, *, max_answers: int = 10) -> list[str]:
    """Answers from the model's reply: a JSON/Python-style list, or the first line after ``Answer:``.
    Raises :class:`ParseError` when nothing usable is there."""
    body = text.strip()
    values: list[str] = []
    bracketed = "[" in body
    if bracketed:
        try:
            found = extract_json(body)
            if isinstance(found, list):
                values = [str(v) for v in found if isinstance(v, str | int | float)]
        except ParseError:
            values = []
        if not values:
            try:
                values = parse_string_list(body)
            except ParseError:  # cut off by max_tokens: keep the complete items
                items = body[body.index("[") + 1 :].split(",")
                values = [v.strip().strip("\"'") for v in items[:-1]]
    if not values and not bracketed:
        lines = [ln for ln in (_PREFIX.sub("", ln).strip() for ln in body.splitlines()) if ln]
        if lines and not _REFUSAL.search(lines[0]):
            values = [lines[0]]
    cleaned = [v.strip().strip("\"'`.").strip() for v in values]
    out = list(dict.fromkeys(v for v in cleaned if _WORDISH.search(v) and len(v) <= 200))[:max_answers]
    if not out:
        raise ParseError("no answer found in the reply", raw=text, expected='a JSON list like ["answer"]')
    return out
