"""The steps of the LLM baselines' traces (issue #30)::

    {"type": "retrieval", "facts": […]}                  # kg_rag: the facts put in the prompt
    {"type": "answer", "answers": […], "attempts": n}     # the parsed reply

(an unparsable reply is a :class:`~tkgqa.methods.base.RefusedStep` ``{"type": "parse_failure", "error": …}``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...trace import TraceStep


@dataclass(frozen=True, eq=False, repr=False)
class RetrievalStep(TraceStep):
    """The retrieved facts, verbalised as in the prompt."""

    tag = ("type", "retrieval")
    facts: list[str]


@dataclass(frozen=True, eq=False, repr=False)
class AnswerStep(TraceStep):
    """The answer list read from the reply, and how many asks it took."""

    tag = ("type", "answer")
    answers: list[str]
    attempts: int
