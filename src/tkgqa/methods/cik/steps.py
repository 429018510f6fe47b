"""CIK-LLM's trace steps (:mod:`tkgqa.trace`): one frozen dataclass per step kind, written as today's JSON.

An answer's trace is ``evidence`` (:class:`EvidenceStep`, :meth:`.method.EvidenceStages.trace`), then
``render`` (:class:`RenderStep`) and ``answer`` (:class:`AnswerStep`); a refused answer ends with
:class:`~tkgqa.methods.base.RefusedStep` (``{"step": "answer", "error": …}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...trace import TraceStep


@dataclass(frozen=True, eq=False, repr=False)
class EvidenceStep(TraceStep):
    """The evidence pipeline: question entities in the KG and missing from it, the validated path of each
    entity (``{"entity", "path", "dropped": [[hop, relation], …]}``), the entities whose path selection
    failed and those the 1-hop fallback served, the fact count of each stage, whether more than δ2 facts
    remained, the time constraint read from the question (``None``: none) and the path selection's error."""

    tag = ("step", "evidence")
    entities: list[str]
    missing: list[str]
    paths: list[Mapping[str, Any]]
    path_failed: list[str]
    fallback: list[str]
    counts: Mapping[str, int]
    over_delta2: bool
    constraint: str | None
    selection_error: str


@dataclass(frozen=True, eq=False, repr=False)
class RenderStep(TraceStep):
    """The evidence as Π_rog reads it: compressed or not, its layout and its token count."""

    tag = ("step", "render")
    compressed: bool
    layout: str
    tokens: int


@dataclass(frozen=True, eq=False, repr=False)
class AnswerStep(TraceStep):
    """Π_rog's answer: the answers as the model wrote them and decompressed (deduplicated, non-empty)."""

    tag = ("step", "answer")
    raw: list[str]
    answers: list[str]
