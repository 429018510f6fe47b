"""The ``example_lines`` dataset: a text file of ``question<TAB>answer`` lines."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tkgqa.datasets import Dataset, Question
from tkgqa.errors import ConfigError, DataError


def load_example_lines(
    data_dir: str | os.PathLike[str] | None = None,
    questions: str | os.PathLike[str] | None = None,
    split: str = "test",
    *,
    kg: str | os.PathLike[str] | None = None,
    context: str | None = None,
    **options: Any,
) -> Dataset:
    source = questions or data_dir
    if source is None:
        raise ConfigError("example_lines: pass the question file")
    path = Path(source)
    qs = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        text, sep, answer = line.partition("\t")
        if not sep:
            raise DataError("expected 'question<TAB>answer'", path=str(path), line=i)
        qs.append(Question(qid=f"ex{i}", text=text, answers=[answer], dataset="example_lines"))
    return Dataset("example_lines", qs, Path(kg) if kg else None, {"split": split})
