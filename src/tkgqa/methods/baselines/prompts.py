"""Prompts of the paper's LLM baselines (ARI Appendix A.1): LLM only and KG-RAG (the KB-interaction schema
block of CoT KB is ARI's, in :mod:`tkgqa.methods.ari.prompts`). Answers are read by the shared list parser
(:func:`tkgqa.llm.parsing.parse_answer_list`, re-exported here), never evaluated."""

from __future__ import annotations

from collections.abc import Sequence

from ...llm.base import Message
from ...llm.parsing import parse_answer_list
from ...prompts.base import Context, Prompt

__all__ = ["ANSWER_FORMAT", "KG_RAG_PROMPT", "LLM_ONLY_PROMPT", "build_kg_rag_messages",
           "build_llm_only_messages", "parse_answer_list"]  # fmt: skip

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


def _build_llm_only(context: Context) -> list[Message]:
    return build_llm_only_messages(context["question"])


def _build_kg_rag(context: Context) -> list[Message]:
    return build_kg_rag_messages(context["question"], context["facts"])


#: ``{"question"}`` → the answer list.
LLM_ONLY_PROMPT: Prompt[list[str]] = Prompt("baselines.llm_only", _build_llm_only, parse_answer_list)
#: ``{"question", "facts"}`` (verbalised quadruples) → the answer list.
KG_RAG_PROMPT: Prompt[list[str]] = Prompt("baselines.kg_rag", _build_kg_rag, parse_answer_list)
