"""ARI's parse task (``tkgqa llm parse --task ari.action``): the chosen action, read as the agent reads it;
a line of the authors' recording is read step by step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...llm.parse_tasks import ParseTask
from .prompts import ActionChoice, parse_action_choice


def _action(response: str, record: Mapping[str, Any]) -> tuple[str, str]:
    actions = list(record["candidate_actions"])
    free = bool(record.get("allow_free_answer", True))
    choice: ActionChoice = parse_action_choice(response, actions, allow_free_answer=free)
    note = "a free answer (not one of the offered actions)" if choice.index is None else ""
    return choice.written(actions), note


def _steps(record: Mapping[str, Any]) -> list[Any] | None:
    """The ARI authors' recording (``llm_recordings/ari_cronquestions_gpt35_actions.jsonl``): one line per
    question, ``{"qid", "question", "steps": [{"step", "candidate_actions", "response", "retrieval"}]}`` →
    one record per step, id ``QID#STEP``."""
    steps = record.get("steps")
    if "response" in record or not isinstance(steps, list):
        return None
    qid = record.get("qid", record.get("id"))
    out: list[Any] = []
    for i, step in enumerate(steps):
        if not isinstance(step, Mapping):
            out.append(step)
            continue
        out.append({**step, "id": f"{qid}#{step.get('step', i)}"})
    return out


def _check(record: Mapping[str, Any]) -> str:
    if not all(isinstance(a, str) for a in record["candidate_actions"]):
        return "field candidate_actions must be a list of strings"
    return ""


TASKS = (
    ParseTask(
        "ari.action",
        {"candidate_actions": list},
        _action,
        lambda v: v,
        "ARI's chosen action, among candidate_actions (tkgqa's or the authors' $f(a,b,c)$ notation); "
        "a line of the authors' recording ({qid, steps: [{candidate_actions, response}]}) is read "
        "step by step",
        expand=_steps,
        check=_check,
    ),
)
