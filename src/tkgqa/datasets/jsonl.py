"""Generic JSONL questions for your own data: one object per line.

Required: ``question`` (text) and ``answers`` (a list of strings; a single string/number is accepted).
Optional: ``qid`` (default: the line number), ``answer_ids`` (aligned with ``answers``), ``answer_type``
(entity|time|value), ``qtype``, ``qlabel``, ``time_level``, ``types``, ``entities``, ``times``, ``relations``,
``context`` (a list of facts ``{"subject", "relation", "object", "start", "end"}``: answer over these only),
``extra`` (an object); any other key lands in ``extra``. A bad line raises DataError with ``file:line``.
``data_dir`` may be the file itself or a folder with ``{split}.jsonl`` / ``questions.jsonl`` (and
optionally a KG ``kg.tsv`` / ``kg.txt`` / ``kg/full.txt``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import DataError
from ..kg.fact import Fact
from .base import Question
from .core import (
    Dataset,
    DatasetRequest,
    dataset_loader,
    find_file,
    iter_jsonl,
    resolve_kg,
    str_list,
)

KG_FILES = ("kg.tsv", "kg.txt", "kg/full.txt", "kg.jsonl")
_LISTS = ("answer_ids", "types", "entities", "times", "relations")
_SCALARS = ("answer_type", "qtype", "qlabel", "time_level")
_KNOWN = {"question", "answers", "qid", "context", "extra", *_LISTS, *_SCALARS}


def _context(value: Any, path: Path, line: int) -> list[Fact] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise DataError("'context' must be a list of fact objects", path=str(path), line=line)
    facts = []
    for item in value:
        if not isinstance(item, dict):
            raise DataError(
                "'context' items must be objects {subject, relation, object, start, end}",
                path=str(path),
                line=line,
            )
        try:
            facts.append(Fact.from_dict(item))
        except KeyError as exc:
            raise DataError(f"a context fact lacks {exc}", path=str(path), line=line) from None
        except DataError as exc:
            raise DataError(f"bad context fact time: {exc.message}", path=str(path), line=line) from None
    return facts


def parse_row(row: Any, path: Path, line: int, name: str) -> Question:
    """One JSONL object → :class:`Question` (DataError with ``path:line`` on any problem)."""
    if not isinstance(row, dict):
        raise DataError("expected a JSON object", path=str(path), line=line)
    if not isinstance(row.get("question"), str) or not row["question"].strip():
        raise DataError("missing or empty 'question' (a string)", path=str(path), line=line)
    if "answers" not in row and "answer" not in row:
        raise DataError("missing 'answers' (a list of strings)", path=str(path), line=line)
    fields: dict[str, Any] = {
        "answers": str_list(row.get("answers", row.get("answer")), "'answers'", path, line)
    }
    for key in _LISTS:
        if key in row:
            fields[key] = str_list(row[key], f"'{key}'", path, line)
    for key in _SCALARS:
        if row.get(key) is not None:
            fields[key] = str(row[key])
    extra = row.get("extra") or {}
    if not isinstance(extra, dict):
        raise DataError("'extra' must be an object", path=str(path), line=line)
    extra = {**{k: v for k, v in row.items() if k not in _KNOWN and k != "answer"}, **extra}
    try:
        return Question(
            qid=str(row.get("qid", line)),
            text=row["question"],
            dataset=name,
            context=_context(row.get("context"), path, line),
            extra=extra,
            **fields,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise DataError(f"invalid {where}: {first['msg']}", path=str(path), line=line) from None


def read_jsonl_questions(path: Path, name: str = "jsonl") -> list[Question]:
    """Every question of a JSONL file; duplicate ``qid``s raise DataError with the second line."""
    out: list[Question] = []
    seen: dict[str, int] = {}
    for line, row in iter_jsonl(path):
        q = parse_row(row, path, line, name)
        if q.qid in seen:
            raise DataError(
                f"duplicate qid {q.qid!r} (first on line {seen[q.qid]})", path=str(path), line=line
            )
        seen[q.qid] = line
        out.append(q)
    return out


@dataset_loader("jsonl")
def load_jsonl(request: DatasetRequest, *, name: str = "jsonl") -> Dataset:
    """Questions from a JSONL file (see the module docstring for the fields)."""
    root, split = request.root, request.split
    qfile = find_file(
        "JSONL questions", root, request.questions, [f"{split}.jsonl", "questions.jsonl", "*.jsonl"]
    )
    qs = read_jsonl_questions(qfile, name)
    if request.context == "kg":
        qs = [q.model_copy(update={"context": None}) for q in qs]
    kg_root = root if root is not None and root.is_dir() else None
    kg_path = resolve_kg(request.kg, kg_root, KG_FILES)
    return Dataset(name, qs, kg_path, {"questions_file": str(qfile), "split": split})
