"""CLQA-Wiki (LPKG, Wang et al., Findings of EMNLP 2024): complex logical questions with set-valued answers.

Format: ``CLQA_Wiki_v1.json`` = a list of {question, label (list of answer names), type (2p, 3p, 2i, 3i, 2u,
compare, ip, pi)}; our copy adds ``clqa_index`` (used as the question id when present, else the position).
Not temporal and no KG ships with it; score with the set metrics (``meta["set_valued"]``).
"""

from __future__ import annotations

from ..errors import DataError
from .base import Question
from .core import Dataset, DatasetRequest, as_path, dataset_loader, find_file, read_records, str_list


@dataset_loader("clqa")
def load_clqa(request: DatasetRequest) -> Dataset:
    """CLQA-Wiki questions (``data_dir`` may be the JSON file itself); ``kg`` optionally names a KG file."""
    qfile = find_file("CLQA-Wiki questions", request.root, request.questions, ["CLQA_Wiki_v1.json", "*.json"])
    qs = []
    for i, row in enumerate(read_records(qfile)):
        if "question" not in row:
            raise DataError(f"question #{i} has no 'question' field", path=str(qfile))
        answers = str_list(row.get("label", row.get("answers")), f"question #{i} label", qfile)
        extra = {k: v for k, v in row.items() if k not in {"question", "label", "type"}}
        qs.append(
            Question(
                qid=str(row.get("clqa_index", i)),
                text=str(row["question"]),
                answers=answers,
                answer_type="entity",
                qtype=row.get("type"),
                dataset="clqa",
                extra=extra,
            )
        )
    kg_path = as_path(request.kg)
    meta = {"questions_file": str(qfile), "set_valued": True, "split": request.split}
    return Dataset("clqa", qs, kg_path, meta)
