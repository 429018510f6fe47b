"""MultiTQ (Chen et al., ACL 2023): ICEWS05-15 quadruples and multi-granularity questions.

Official layout: ``questions/{dev,test}.json`` (a list of {quid, question, answers, answer_type, time_level,
qtype, qlabel}) and ``kg/full.txt`` (``subject\\trelation\\tobject\\tYYYY-MM-DD``). Our shared copy has
``questions/test_gold_sample.json`` (same fields) and the partial KG ``kg/full_partial.txt``; ``full.txt`` is
preferred when present. Answers keep MultiTQ's spelling (spaces); ``answer_ids`` (aligned with ``answers``)
hold the KG spelling of entity answers (``_`` for spaces).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from .base import Question
from .core import (
    Dataset,
    DatasetRequest,
    dataset_loader,
    find_file,
    parse_questions,
    read_records,
    resolve_kg,
    row_parser,
)
from .core import str_list as _str_list

KG_FILES = ("kg/full.txt", "full.txt", "kg/full_partial.txt")
_FIELDS = {"quid", "question", "answers", "answer_type", "time_level", "qtype", "qlabel"}


def question_files(split: str) -> list[str]:
    files = [f"questions/{split}.json", f"{split}.json"]
    if split == "test":
        files.append("questions/test_gold_sample.json")
    return files


def _answer_type(value: Any, path: Path, i: int) -> str | None:
    if value in (None, ""):
        return None
    text = str(value).lower()
    if text not in {"entity", "time"}:
        raise DataError(f"question #{i}: answer_type must be entity or time, got {value!r}", path=str(path))
    return text


@row_parser
def to_question(row: dict[str, Any], path: Path, i: int) -> Question:
    """One MultiTQ record → :class:`Question` (``qid`` = ``str(quid)``)."""
    if "question" not in row:
        raise DataError(f"question #{i} has no 'question' field", path=str(path))
    answers = _str_list(row.get("answers"), f"question #{i} answers", path)
    answer_type = _answer_type(row.get("answer_type"), path, i)
    ids = [a.replace(" ", "_") if answer_type != "time" else a for a in answers]
    extra = {k: v for k, v in row.items() if k not in _FIELDS}
    return Question(
        qid=str(row.get("quid", i)),
        text=str(row["question"]),
        answers=answers,
        answer_ids=ids,
        answer_type=answer_type,  # type: ignore[arg-type]
        time_level=row.get("time_level"),
        qtype=row.get("qtype"),
        qlabel=row.get("qlabel"),
        dataset="multitq",
        extra=extra,
    )


@dataset_loader("multitq")
def load_multitq(request: DatasetRequest) -> Dataset:
    """MultiTQ questions (+ the KG file path). ``context`` is accepted for symmetry (MultiTQ has none)."""
    qfile = find_file("MultiTQ questions", request.root, request.questions, question_files(request.split))
    records = read_records(qfile)
    qs, warnings = parse_questions(records, to_question, qfile)
    kg_path = resolve_kg(request.kg, request.root, KG_FILES)
    partial = kg_path is not None and kg_path.name == "full_partial.txt"
    meta = {
        "questions_file": str(qfile),
        "split": request.split,
        "kg_partial": partial,
        "no_gold": sum(not q.answers for q in qs),
    }
    notices = (
        (
            f"the KG is {kg_path}, a partial copy of MultiTQ's ICEWS05-15 KG: questions whose facts it lacks "
            "cannot be answered by any method; read 'Hits@1 on the KG-supported subset' beside the overall "
            "figure (put the full kg/full.txt in the data folder to use it)",
        )
        if partial
        else ()
    )
    return Dataset("multitq", qs, kg_path, meta, warnings, notices=notices)
