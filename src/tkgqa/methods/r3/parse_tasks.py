"""R3's parse tasks (``tkgqa llm parse --task r3.verdict | r3.axiom``): the verdict and the surfaced axiom."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...llm.parse_tasks import ParseTask, as_is
from .prompts.ours import parse_axiom, parse_verdict


def _verdict(response: str, record: Mapping[str, Any]) -> str:
    return str(parse_verdict(response))


def _axiom(response: str, record: Mapping[str, Any]) -> dict[str, object]:
    return parse_axiom(response).to_dict()


TASKS = (
    ParseTask("r3.verdict", {}, _verdict, as_is, "R3's verdict (true/false/unknown)"),
    ParseTask("r3.axiom", {}, _axiom, as_is, "R3's surfaced axiom (rule, premises, conclusion)"),
)
