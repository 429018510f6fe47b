"""LPKG's parse task (``tkgqa llm parse --task lpkg.plan``): the code-formatted plan, and its pattern."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...llm.parse_tasks import ParseTask
from .plan import Plan, parse_plan


def _plan(response: str, record: Mapping[str, Any]) -> Plan:
    return parse_plan(response)


def _render(plan: Plan) -> tuple[Any, str]:
    pattern = plan.pattern()
    return plan.to_text(), f"pattern {pattern}" if pattern is not None else "a plan of no known pattern"


TASKS = (ParseTask("lpkg.plan", {}, _plan, _render, "LPKG's code-formatted plan"),)
