"""The typed abstention (issue #30): ``Answer.reason`` is an :class:`Abstention` (kind + text) made from a
member by methods, read from text only where text comes from outside, and written as today's text."""

from __future__ import annotations

import dataclasses
import json
import string

import pytest

from tkgqa.methods import Answer
from tkgqa.outcomes import AbstainReason, Abstention


def _fields(member: AbstainReason) -> dict[str, str]:
    return {f: f"<{f}>" for _, f, _, _ in string.Formatter().parse(member.value) if f}


@pytest.mark.parametrize("member", [m for m in AbstainReason if m is not AbstainReason.OTHER])
def test_a_note_is_the_member_and_its_text_and_reads_back_the_same(member: AbstainReason) -> None:
    note = member.note(**_fields(member))
    assert note.kind is member and note.text == member.format(**_fields(member)) and str(note) == note.text
    assert Abstention.of(note.text) == note  # text → value → text
    answer = Answer.abstain(note)
    assert answer.reason is note and answer.to_dict()["reason"] == note.text == answer.reason_text


def test_a_template_member_fills_its_fields() -> None:
    note = AbstainReason.EVIDENCE_OVER_LIMIT.note(tokens=900, limit=800)
    assert note == Abstention(
        AbstainReason.EVIDENCE_OVER_LIMIT, "evidence of 900 tokens exceeds the limit 800"
    )
    assert note.kind.token_limit
    assert AbstainReason.NO_FACTS_RETRIEVED.note() == Abstention(
        AbstainReason.NO_FACTS_RETRIEVED, "no facts retrieved"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        note.text = "changed"  # type: ignore[misc]


def test_a_plugins_string_is_still_a_reason() -> None:
    own = Answer.abstain("the KG has no fact about Zed")  # a third-party method's words
    assert own.reason == Abstention(AbstainReason.OTHER, "the KG has no fact about Zed")
    known = Answer.abstain("no facts retrieved")  # a member's text, recognised
    assert known.reason is not None and known.reason.kind is AbstainReason.NO_FACTS_RETRIEVED
    member = Answer.abstain(AbstainReason.MODEL_DONT_KNOW)  # a bare member
    assert member.reason == AbstainReason.MODEL_DONT_KNOW.note()
    direct = Answer([], abstained=True, reason="no answer (budget)")  # type: ignore[arg-type]
    assert direct.reason == AbstainReason.NO_ANSWER.note(stop="budget")
    assert json.dumps(own.to_dict()["reason"]) == '"the KG has no fact about Zed"'


def test_no_reason_is_none_and_written_as_empty_text() -> None:
    assert Answer(["Bob"]).reason is None and Answer(["Bob"]).to_dict()["reason"] == ""
    assert Answer.abstain("").reason is None and Answer.abstain("").to_dict()["reason"] == ""
    assert Abstention.of("") is None
