"""Named parse tasks: how tkgqa reads one model reply of each method — the registry behind
``tkgqa llm parse`` (and the recorded-output conformance tests).

A :class:`ParseTask` names the fields an input record needs besides ``id`` and ``response``, the parser
(the method's own, raising :class:`~tkgqa.errors.ParseError` when it refuses the reply) and how its value
is written as JSON. :func:`run_task` turns one record into a :class:`ParseOutcome` (``ok``, ``value``,
``reason``, and the refusal ``category`` the summary counts). It lives in the eval layer because it
gathers the parsers of several methods (which never import each other).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ParseError
from ..llm.lists import read_answer_list
from ..llm.parsing import error_reason
from ..methods.lpkg.plan import Plan, parse_plan
from ..methods.timer4.rewrite import check_rewrite
from ..prompts import cik, r3
from ..prompts.ari import ActionChoice, parse_action_choice
from ..prompts.timer4 import parse_rewrite

BAD_INPUT = "bad_input"


class ReplyRejected(ParseError):
    """A reply the task's parser read but does not accept, with the kind of refusal (``category``)."""

    def __init__(self, category: str, message: str, *, raw: str) -> None:
        super().__init__(message, raw=raw)
        self.category = category


@dataclass(frozen=True)
class ParseOutcome:
    """What a task made of one record: the value (JSON-ready) when ``ok``, else the reason; ``category``
    names the kind of refusal (``ok`` for an accepted reply; ``note`` for one read with a remark)."""

    ok: bool
    value: Any = None
    reason: str = ""
    category: str = "ok"

    def row(self, record_id: Any) -> dict[str, Any]:
        return {"id": record_id, "ok": self.ok, "value": self.value, "reason": self.reason}


@dataclass(frozen=True)
class ParseTask:
    """One named task: the extra fields a record needs (name → expected JSON type), the parser of
    ``(response, record)`` and the renderer of its value as ``(JSON value, remark)``."""

    name: str
    fields: Mapping[str, type | tuple[type, ...]]
    parse: Callable[[str, Mapping[str, Any]], Any]
    render: Callable[[Any], tuple[Any, str]]
    help: str
    #: A line of a recording in its own format → the records it holds (``None``: one record per line).
    expand: Callable[[Mapping[str, Any]], list[Any] | None] | None = None

    def records(self, record: object) -> list[Any]:
        """The records an input line holds: itself, or what :attr:`expand` finds in it."""
        if self.expand is not None and isinstance(record, Mapping):
            found = self.expand(record)
            if found is not None:
                return found
        return [record]


def _as_is(value: Any) -> tuple[Any, str]:
    return value, ""


# --- the tasks' parsers ------------------------------------------------------------------------------------
def _timer4_answer(response: str, record: Mapping[str, Any]) -> tuple[list[str], str]:
    reading = read_answer_list(response)
    if not reading.items:
        if reading.declined:
            raise ReplyRejected("declined", "the reply gives no answer", raw=response)
        raise ReplyRejected("no_answer", "no answer found in the reply", raw=response)
    return list(reading.items), reading.note


def _timer4_rewrite(response: str, record: Mapping[str, Any]) -> str:
    proposed = parse_rewrite(response)
    check = check_rewrite(record["original_question"], proposed)
    if not check.accepted:
        raise ReplyRejected(str(check.verdict), f"not a rewrite: {check.reason()}", raw=response)
    return proposed


def _ari_action(response: str, record: Mapping[str, Any]) -> tuple[str, str]:
    actions = list(record["candidate_actions"])
    free = bool(record.get("allow_free_answer", True))
    choice: ActionChoice = parse_action_choice(response, actions, allow_free_answer=free)
    note = "a free answer (not one of the offered actions)" if choice.index is None else ""
    return choice.written(actions), note


def _ari_steps(record: Mapping[str, Any]) -> list[Any] | None:
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


def _r3_verdict(response: str, record: Mapping[str, Any]) -> str:
    return str(r3.parse_verdict(response))


def _r3_axiom(response: str, record: Mapping[str, Any]) -> dict[str, object]:
    return r3.parse_axiom(response).to_dict()


def _lpkg_plan(response: str, record: Mapping[str, Any]) -> Plan:
    return parse_plan(response)


def _render_plan(plan: Plan) -> tuple[Any, str]:
    pattern = plan.pattern()
    return plan.to_text(), f"pattern {pattern}" if pattern is not None else "a plan of no known pattern"


def _cik_paths(response: str, record: Mapping[str, Any]) -> list[list[str]]:
    return cik.parse_relation_paths(response)


def _cik_answer(response: str, record: Mapping[str, Any]) -> list[str]:
    return cik.parse_rog_answer(response)


TASKS: dict[str, ParseTask] = {
    t.name: t
    for t in (
        ParseTask("timer4.answer", {}, _timer4_answer, lambda v: v, "TimeR4's answer list"),
        ParseTask(
            "timer4.rewrite",
            {"original_question": str},
            _timer4_rewrite,
            _as_is,
            "TimeR4's rewritten question (refused: an answer, an apology, an unrelated question…)",
        ),
        ParseTask(
            "ari.action",
            {"candidate_actions": list},
            _ari_action,
            lambda v: v,
            "ARI's chosen action, among candidate_actions (tkgqa's or the authors' $f(a,b,c)$ notation); "
            "a line of the authors' recording ({qid, steps: [{candidate_actions, response}]}) is read "
            "step by step",
            expand=_ari_steps,
        ),
        ParseTask("r3.verdict", {}, _r3_verdict, _as_is, "R3's verdict (true/false/unknown)"),
        ParseTask("r3.axiom", {}, _r3_axiom, _as_is, "R3's surfaced axiom (rule, premises, conclusion)"),
        ParseTask("lpkg.plan", {}, _lpkg_plan, _render_plan, "LPKG's code-formatted plan"),
        ParseTask("cik.paths", {}, _cik_paths, _as_is, "CIK-LLM's relation paths (Π_esg)"),
        ParseTask("cik.answer", {}, _cik_answer, _as_is, "CIK-LLM's final answers (Π_rog)"),
    )
}


def task_names() -> list[str]:
    return sorted(TASKS)


def check_record(task: ParseTask, record: object) -> str:
    """What is wrong with ``record`` as input of ``task`` ("" when nothing)."""
    if not isinstance(record, dict):
        return f"a line must be a JSON object, not {type(record).__name__}"
    wanted: dict[str, type | tuple[type, ...]] = {"id": (str, int), "response": str, **task.fields}
    missing = [k for k in wanted if k not in record]
    if missing:
        return f"missing field(s) {', '.join(missing)} (task {task.name} needs {', '.join(wanted)})"
    for key, kind in wanted.items():
        value = record[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"field {key} must be {_type_name(kind)}, not {type(value).__name__}"
    actions = record.get("candidate_actions")
    if isinstance(actions, list) and not all(isinstance(a, str) for a in actions):
        return "field candidate_actions must be a list of strings"
    return ""


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", int: "an integer", list: "a list"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def run_task(task: ParseTask, record: object) -> ParseOutcome:
    """Read one record's ``response`` with ``task`` (bad input is an outcome too, never an exception)."""
    problem = check_record(task, record)
    if problem:
        return ParseOutcome(False, reason=f"bad input: {problem}", category=BAD_INPUT)
    assert isinstance(record, dict)
    response = record["response"]
    try:
        value, remark = task.render(task.parse(response, record))
    except ParseError as exc:
        category = getattr(exc, "category", None) or str(getattr(exc, "refusal", "") or "unparsed")
        return ParseOutcome(False, reason=error_reason(exc), category=category)
    return ParseOutcome(True, value, remark, "note" if remark else "ok")
