"""The KG of a question that brings its own facts (``Question.context``: TimeQuestions with TimeR4's retrieved
facts, CronQuestions samples): built in one place so the evaluation runner, the service and every method
read the same store (same names, same display labels)."""

from __future__ import annotations

from ..datasets.base import Question
from ..kg.memory import TemporalKG

__all__ = ["context_kg"]


def context_kg(question: Question) -> TemporalKG:
    """A store of ``question.context`` named ``context:<qid>``; labels as in the shared KGs (``_`` shown as a
    space). ValueError when the question has no context."""
    if question.context is None:
        raise ValueError(f"question {question.qid} has no context facts")
    return TemporalKG(question.context, name=f"context:{question.qid}")
