"""The bundled demo question set (hand-written questions over the bundled demo KG)."""

from __future__ import annotations

import json
from importlib import resources

from ..errors import DataError
from .base import Question


def load_demo_questions() -> list[Question]:
    """Questions of ``tkgqa/data/demo_questions.jsonl`` with their gold answers."""
    text = resources.files("tkgqa.data").joinpath("demo_questions.jsonl").read_text(encoding="utf-8")
    questions = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            questions.append(
                Question(
                    qid=row["qid"],
                    text=row["question"],
                    answers=list(row["answers"]),
                    answer_type=row.get("answer_type"),
                    qtype=row.get("qtype"),
                    time_level=row.get("time_level"),
                    dataset="demo",
                )
            )
        except (ValueError, KeyError) as exc:
            raise DataError(f"bad demo question: {exc}", path="demo_questions.jsonl", line=lineno) from exc
    return questions
