"""CIK-LLM's parse tasks (``tkgqa llm parse --task cik.paths | cik.answer``): relation paths (Π_esg) and
final answers (Π_rog)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...llm.parse_tasks import ParseTask, as_is
from .prompts import parse_relation_paths, parse_rog_answer


def _paths(response: str, record: Mapping[str, Any]) -> list[list[str]]:
    return parse_relation_paths(response)


def _answer(response: str, record: Mapping[str, Any]) -> list[str]:
    return parse_rog_answer(response)


TASKS = (
    ParseTask("cik.paths", {}, _paths, as_is, "CIK-LLM's relation paths (Π_esg)"),
    ParseTask("cik.answer", {}, _answer, as_is, "CIK-LLM's final answers (Π_rog)"),
)
