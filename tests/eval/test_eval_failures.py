"""Evaluation numbers must not lie (issue #12): error rows are not abstentions, resume retries them, the
usage of a failed question is kept, and missing optional inputs are warnings (errors with ``strict``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from tkgqa.datasets import Dataset, Question
from tkgqa.errors import DataError, LLMError, MissingInputWarning
from tkgqa.eval import evaluate, read_results
from tkgqa.kg import Fact, KGStore, TemporalKG
from tkgqa.llm import AnswerUsage, Usage
from tkgqa.methods import Answer, Method, MethodConfig
from tkgqa.outcomes import ErrorKind, Outcome


class Flaky(Method):
    """Answers ``"A"``; raises an LLMError (carrying usage) for the qids in ``down`` — a backend outage."""

    name: ClassVar[str] = "flaky"

    def __init__(self, down: set[str] | None = None) -> None:
        self.config = MethodConfig()
        self.down = down or set()
        self.seen: list[str] = []

    def reason(self, question: Question, kg: KGStore) -> Answer:
        self.seen.append(question.qid)
        if question.qid in self.down:
            usage = Usage(prompt_tokens=1000, completion_tokens=0, calls=2)
            raise LLMError("HTTP 500 from http://x/v1: kaboom", usage=usage, backend="openai", model="gpt-4o")
        return Answer(["A"], usage=AnswerUsage(Usage(calls=1)))


def qs(n: int = 3) -> list[Question]:
    return [Question(qid=str(i), text=f"q{i}?", answers=["A"]) for i in range(n)]


def toy_kg() -> TemporalKG:
    return TemporalKG([Fact("A", "r", "B")], name="toy")


def test_llm_errors_are_error_rows_with_their_usage(tmp_path: Path) -> None:
    report = evaluate(Flaky({"1"}), qs(), toy_kg(), tmp_path, progress=False)
    assert report.errors == 1 and report.errors_by_type == {"LLMError": 1}
    assert report.metrics["strict_hits@1"] == pytest.approx(2 / 3)  # the error counts as a miss
    row = {r.qid: r for r in read_results(tmp_path)}["1"]
    assert not row.abstained and row.error_type == "LLMError" and "kaboom" in str(row.error)
    assert row.error_kind is ErrorKind.LLM and row.outcome is Outcome.ERROR
    assert " at " not in str(row.error)  # a project error needs no source location
    assert row.usage["llm_calls"] == 2 and row.usage["prompt_tokens"] == 1000
    assert row.usage["cost_usd"] > 0  # priced for the model the error names
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["errors"] == 1 and data["errors_by_type"] == {"LLMError": 1}
    assert data["usage"]["llm_calls"] == 4 and data["usage"]["cost_usd"] > 0


def test_resume_retries_error_rows_unless_told_not_to(tmp_path: Path) -> None:
    evaluate(Flaky({"1", "2"}), qs(), toy_kg(), tmp_path, progress=False)
    kept = Flaky()
    report = evaluate(kept, qs(), toy_kg(), tmp_path, progress=False, retry_errors=False)
    assert kept.seen == [] and report.errors == 2
    again = Flaky({"2"})
    report = evaluate(again, qs(), toy_kg(), tmp_path, progress=False)
    assert again.seen == ["1", "2"] and report.errors == 1 and report.selection["retried_errors"] == 2
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["qid"] for x in lines) == ["0", "1", "2"]  # replaced, not duplicated
    last = Flaky()
    report = evaluate(last, qs(), toy_kg(), tmp_path, progress=False)
    assert last.seen == ["2"] and report.errors == 0 and report.metrics["strict_hits@1"] == 1.0


def test_dataset_warnings_are_reported_and_strict_refuses(tmp_path: Path) -> None:
    warning = "timequestions: no relation-label file; results drop"
    ds = Dataset("timequestions", qs(), None, warnings=(warning,))
    with pytest.warns(MissingInputWarning, match="relation-label"):
        report = evaluate(Flaky(), ds, toy_kg(), tmp_path / "a", progress=False)
    assert report.warnings == [warning]
    assert json.loads((tmp_path / "a" / "report.json").read_text())["warnings"] == [warning]
    assert "Warning: timequestions: no relation-label file" in (tmp_path / "a" / "report.md").read_text()
    told: list[str] = []
    evaluate(Flaky(), ds, toy_kg(), tmp_path / "b", progress=False, warn=told.append)
    assert told == [warning]
    method = Flaky()
    with pytest.raises(DataError, match=r"strict mode.*relation-label"):
        evaluate(method, ds, toy_kg(), tmp_path / "c", progress=False, strict=True)
    assert method.seen == [] and not (tmp_path / "c").exists()


def test_a_dataset_without_a_kg_warns(tmp_path: Path) -> None:
    ds = Dataset("jsonl", [*qs(2), Question(qid="c", text="?", answers=["B"], context=[Fact("A", "r", "B")])])
    told: list[str] = []
    report = evaluate(Flaky(), ds, None, tmp_path / "a", progress=False, warn=told.append)
    assert len(told) == 1 and "2 of 3 questions" in told[0] and "empty KG" in told[0]
    assert report.warnings == told
    quiet: list[str] = []
    evaluate(Flaky(), ds, toy_kg(), tmp_path / "b", progress=False, warn=quiet.append)
    evaluate(Flaky(), qs(2), None, tmp_path / "c", progress=False, warn=quiet.append)  # bare questions
    assert quiet == []
