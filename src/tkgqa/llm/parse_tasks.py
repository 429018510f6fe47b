"""Parse tasks: how tkgqa reads one model reply of a method — the machinery behind ``tkgqa llm parse`` (and
the recorded-output conformance tests).

A :class:`ParseTask` names the fields an input record needs besides ``id`` and ``response``, the parser
(the method's own, raising :class:`~tkgqa.errors.ParseError` when it refuses the reply) and how its value
is written as JSON. :func:`run_task` turns one record into a :class:`ParseOutcome` (``ok``, ``value``,
``reason``, and the refusal ``category`` the summary counts).

The tasks themselves live with their methods (``tkgqa/methods/<name>/parse_tasks.py``, declared in the
package's :class:`~tkgqa.methods.package.MethodPackage`); :func:`tkgqa.methods.package.parse_tasks` gathers
them by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ParseError
from .parsing import error_reason

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
    #: What else is wrong with a record whose fields have their types ("" when nothing).
    check: Callable[[Mapping[str, Any]], str] | None = None

    def records(self, record: object) -> list[Any]:
        """The records an input line holds: itself, or what :attr:`expand` finds in it."""
        if self.expand is not None and isinstance(record, Mapping):
            found = self.expand(record)
            if found is not None:
                return found
        return [record]


def as_is(value: Any) -> tuple[Any, str]:
    """The renderer of a value that is JSON as it is, with no remark."""
    return value, ""


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
    return task.check(record) if task.check is not None else ""


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
