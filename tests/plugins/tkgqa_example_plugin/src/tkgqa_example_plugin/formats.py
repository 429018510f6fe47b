"""The ``pipe`` KG format: ``subject|relation|object|start[|end]`` lines (``#`` comments)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tkgqa.errors import DataError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.kg.formats import KGFormat, data_lines
from tkgqa.time import parse_time


def load_pipe(
    path: str | os.PathLike[str], *, strict: bool = True, labels: Any = None, name: str | None = None
) -> TemporalKG:
    p = Path(path)
    facts = []
    for lineno, line in data_lines(p):
        parts = [x.strip() for x in line.split("|")]
        if len(parts) not in (4, 5):
            if strict:
                raise DataError(
                    f"expected 4 or 5 '|'-separated fields, got {len(parts)}", path=str(p), line=lineno
                )
            continue
        start = parse_time(parts[3])
        end = parse_time(parts[4]) if len(parts) == 5 else start
        facts.append(Fact(parts[0], parts[1], parts[2], start, end))
    return TemporalKG(facts, name=name or p.stem)


def _detect(head: Sequence[str]) -> bool:
    return all(len(line.split("|")) in (4, 5) for line in head)


PIPE = KGFormat("pipe", load_pipe, suffixes=(".pipe",), detect=_detect, description="s|r|o|start[|end]")
