"""``ResultRow`` (a ``results.jsonl`` line) and the typed outcomes: lines read back and written again byte for
byte, older lines with missing keys, abstain reasons recognised from the text methods write."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tkgqa.datasets import Question
from tkgqa.eval import evaluate, read_results
from tkgqa.kg import Fact, KGStore, TemporalKG
from tkgqa.methods import Answer, Method, MethodConfig
from tkgqa.outcomes import AbstainReason, ErrorKind, Outcome, ResultRow


class Scripted(Method):
    """Answers from a script: a list of answers, an abstention reason, or an exception."""

    name: ClassVar[str] = "scripted"

    def __init__(self, script: dict[str, object]) -> None:
        self.config = MethodConfig()
        self.script = script

    def reason(self, question: Question, kg: KGStore) -> Answer:
        what = self.script[question.qid]
        if isinstance(what, Exception):
            raise what
        if isinstance(what, str):
            return Answer.abstain(what, trace=[{"step": "why", "text": what}])
        assert isinstance(what, list)
        return Answer(what, evidence=[Fact("Ann", "met", "Bob")], trace=[{"step": "x"}])


def _run(tmp_path: Path) -> list[ResultRow]:
    questions = [Question(qid=q, text=f"Who did Ann meet? ({q})", answers=["Bob"]) for q in "abcd"]
    kg = TemporalKG([Fact("Ann", "met", "Bob")], name="toy")
    script: dict[str, object] = {
        "a": ["Bob"],
        "b": ["Cy"],
        "c": AbstainReason.EVIDENCE_OVER_LIMIT.format(tokens=900, limit=800),
        "d": RuntimeError("boom"),
    }
    evaluate(Scripted(script), questions, kg, tmp_path, progress=False)
    return read_results(tmp_path)


def test_rows_are_written_back_byte_for_byte(tmp_path: Path) -> None:
    rows = _run(tmp_path)
    lines = (tmp_path / "results.jsonl").read_text("utf-8").splitlines()
    assert [json.dumps(r.to_json(), ensure_ascii=False) for r in rows] == lines
    assert list(json.loads(lines[0]))[:3] == ["qid", "question", "dataset"]


def test_outcomes_reasons_and_error_kinds(tmp_path: Path) -> None:
    rows = {r.qid: r for r in _run(tmp_path)}
    assert [rows[q].outcome for q in "abcd"] == [
        Outcome.CORRECT,
        Outcome.WRONG,
        Outcome.ABSTAINED,
        Outcome.ERROR,
    ]
    assert (
        rows["c"].abstain_reason is AbstainReason.EVIDENCE_OVER_LIMIT and rows["c"].abstain_reason.token_limit
    )
    assert rows["a"].abstain_reason is None and rows["d"].abstain_reason is None
    assert rows["d"].error_kind is ErrorKind.OTHER and rows["a"].error_kind is None
    assert rows["a"].answered and not rows["c"].answered and not rows["d"].answered
    assert rows["c"].steps("why") == [{"step": "why", "text": rows["c"].reason}]


def test_an_old_line_keeps_its_keys_and_reads_with_defaults() -> None:
    old = {"qid": 7, "question": "q?", "predictions": ["x"], "strict_hit": True, "legacy": {"a": 1}}
    row = ResultRow.from_json(old)
    assert row.qid == "7" and row.outcome is Outcome.CORRECT and row.usage == {} and row.supported is None
    assert row.to_json() == {**old, "qid": "7"}  # nothing added, the unknown key kept
    broken = ResultRow.from_json({"qid": "1", "predictions": None, "trace": "junk", "error": 3})
    assert broken.predictions == [] and broken.steps() == [] and broken.outcome is Outcome.ABSTAINED


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
KEYS = st.sampled_from(["qid", "predictions", "trace", "error", "abstained", "reason", "usage", "rank", "x"])


@given(st.dictionaries(KEYS | st.text(max_size=6), JSON, max_size=10))
def test_any_json_object_reads_and_keeps_its_keys(data: dict[str, object]) -> None:
    row = ResultRow.from_json(data)
    assert set(row.to_json()) == set(data)
    assert isinstance(row.outcome, Outcome) and isinstance(row.predictions, list)


def _filled(member: AbstainReason) -> str:
    names = [f for _, f, _, _ in string.Formatter().parse(member.value) if f]
    return member.format(**{name: f"<{name}>" for name in names})


@pytest.mark.parametrize("member", [m for m in AbstainReason if m is not AbstainReason.OTHER])
def test_every_reason_is_recognised_from_its_text(member: AbstainReason) -> None:
    assert AbstainReason.of(_filled(member)) is member


def test_reasons_no_member_describes() -> None:
    assert AbstainReason.of("") is None
    assert AbstainReason.of("cannot link the name 'Zed' to a KG entity") is AbstainReason.OTHER
    assert (
        AbstainReason.of("the evidence set is empty") is AbstainReason.EVIDENCE_EMPTY
    )  # not "{step} is empty"
    assert ErrorKind.of_text("ContextWindowError: too long") is ErrorKind.CONTEXT_WINDOW
    assert ErrorKind.of("KeyError") is ErrorKind.OTHER and ErrorKind.of(None) is None
