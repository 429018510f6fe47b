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
    if options:  # unknown settings are errors, never silently unused
        raise ConfigError(f"dataset 'example_lines' does not take option(s) {sorted(options)}")
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    except OSError as exc:
        raise DataError(f"cannot read the question file ({exc.strerror})", path=str(path)) from None
    qs = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        text, sep, answer = line.partition("\t")
        if not sep:
            raise DataError("expected 'question<TAB>answer'", path=str(path), line=i)
        qs.append(Question(qid=f"ex{i}", text=text, answers=[answer], dataset="example_lines"))
    return Dataset("example_lines", qs, Path(kg) if kg else None, {"split": split})
