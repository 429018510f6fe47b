"""TimeR4's parse tasks (``tkgqa llm parse --task timer4.answer | timer4.rewrite``): its answer list and its
rewritten question, read as the method reads them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...llm.lists import read_answer_list
from ...llm.parse_tasks import ParseTask, ReplyRejected, as_is
from .prompts import parse_rewrite
from .rewrite import check_rewrite


def _answer(response: str, record: Mapping[str, Any]) -> tuple[list[str], str]:
    reading = read_answer_list(response)
    if not reading.items:
        if reading.declined:
            raise ReplyRejected("declined", "the reply gives no answer", raw=response)
        raise ReplyRejected("no_answer", "no answer found in the reply", raw=response)
    return list(reading.items), reading.note


def _rewrite(response: str, record: Mapping[str, Any]) -> str:
    proposed = parse_rewrite(response)
    check = check_rewrite(record["original_question"], proposed)
    if not check.accepted:
        raise ReplyRejected(str(check.verdict), f"not a rewrite: {check.reason()}", raw=response)
    return proposed


TASKS = (
    ParseTask("timer4.answer", {}, _answer, lambda v: v, "TimeR4's answer list"),
    ParseTask(
        "timer4.rewrite",
        {"original_question": str},
        _rewrite,
        as_is,
        "TimeR4's rewritten question (refused: an answer, an apology, an unrelated question…)",
    ),
)
