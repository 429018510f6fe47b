"""The KG of a question that brings its own facts (``Question.context``: TimeQuestions with TimeR4's retrieved
facts, CronQuestions samples): built in one place so the evaluation runner, the service and every method
read the same store (same names, same display labels)."""

from __future__ import annotations

from ..datasets.base import Question
from ..errors import DataError
from ..kg.builder import LoadReport
from ..kg.fact import Fact
from ..kg.memory import TemporalKG
from ..kg.validate import stored_fact

__all__ = ["context_kg"]


def context_kg(question: Question) -> TemporalKG:
    """A store of ``question.context`` named ``context:<qid>``; labels as in the shared KGs (``_`` shown as a
    space). ValueError when the question has no context. A fact with a name no store can hold (an invisible
    character inside it) is skipped and counted in ``kg.load_report``, as the loaders do."""
    if question.context is None:
        raise ValueError(f"question {question.qid} has no context facts")
    facts: list[Fact] = []
    skipped: list[str] = []
    for fact in question.context:  # names as the loaders store them (NFC, no invisible marks at the ends)
        try:
            facts.append(stored_fact(fact))
        except DataError as exc:  # a published label with an invisible character inside: skipped, counted
            skipped.append(str(exc))
    kg = TemporalKG(facts, name=f"context:{question.qid}")
    kg.load_report = LoadReport(
        f"context:{question.qid}", "context", len(question.context), len(facts), len(skipped),
        first_errors=tuple(skipped[:5]),
    )  # fmt: skip
    return kg
