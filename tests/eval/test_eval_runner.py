"""The evaluation harness with local test-double methods (no built-in method is used)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import Field

from tkgqa.datasets import Dataset, Question
from tkgqa.errors import ConfigError
from tkgqa.eval import compare_runs, evaluate, read_results
from tkgqa.kg import Fact, KGStore, TemporalKG
from tkgqa.llm import AnswerUsage, Usage
from tkgqa.methods import Answer, Method, MethodConfig
from tkgqa.outcomes import ErrorKind, Outcome
from tkgqa.time import TimePoint


class LookupConfig(MethodConfig):
    table: dict[str, list[str]] = Field(default_factory=dict)


class Lookup(Method):
    """Answers from a fixed qid → answers table (a test double); abstains on unknown qids."""

    name: ClassVar[str] = "lookup"

    def __init__(self, table: dict[str, list[str]], fail_on: str | None = None, stop_at: str | None = None):
        self.config = LookupConfig(table=table)
        self.fail_on, self.stop_at = fail_on, stop_at
        self.seen: list[tuple[str, str, int]] = []

    def reason(self, question: Question, kg: KGStore) -> Answer:
        self.seen.append((question.qid, kg.name, len(kg)))
        if question.qid == self.stop_at:
            raise KeyboardInterrupt
        if question.qid == self.fail_on:
            raise RuntimeError("boom")
        found = self.config.table.get(question.qid)  # type: ignore[attr-defined]
        if found is None:
            return Answer.abstain("unknown question")
        usage = AnswerUsage(Usage(calls=2, prompt_tokens=100, completion_tokens=10, parse_failures=1))
        evidence = list(kg.facts(limit=1))
        return Answer(list(found), evidence=evidence, usage=usage, raw_output=" ".join(found))


class FirstObject(Method):
    """Answers with the objects of the facts about the question's first annotated entity."""

    name: ClassVar[str] = "first_object"

    def __init__(self) -> None:
        self.config = MethodConfig()

    def reason(self, question: Question, kg: KGStore) -> Answer:
        facts = kg.facts(subject=question.entities[0]) if question.entities else []
        return Answer([kg.label(f.object) for f in facts], evidence=facts)


def kg() -> TemporalKG:
    t = TimePoint.of
    return TemporalKG(
        [
            Fact("Iraq", "Host_a_visit", "Jack_Straw", t("2006-01-07"), t("2006-01-07")),
            Fact("China", "Consult", "Iran", t("2012-05-03"), t("2012-05-03")),
            Fact("France", "Consult", "Germany", t("2010-02-01"), t("2010-02-01")),
        ],
        name="toy",
    )


def questions() -> list[Question]:
    def make(qid: str, text: str, answers: list[str], **kw: object) -> Question:
        return Question(qid=qid, text=text, answers=answers, dataset="multitq", **kw)  # type: ignore[arg-type]

    return [
        make("1", "Who visited Iraq?", ["Jack Straw"], answer_type="entity", qtype="equal", qlabel="Single"),
        make(
            "2",
            "When did China consult Iran?",
            ["2012-05"],
            answer_type="time",
            qtype="equal",
            qlabel="Single",
        ),
        make(
            "3",
            "Who did France consult?",
            ["Germany"],
            answer_type="entity",
            qtype="first_last",
            qlabel="Multiple",
        ),
        make(
            "4",
            "Who consulted Spain?",
            ["Portugal"],
            answer_type="entity",
            qtype="first_last",
            qlabel="Multiple",
        ),
    ]


TABLE = {"1": ["Jack_Straw"], "2": ["2012-05-03"], "3": ["Italy", "Germany"]}


def test_report_and_rows(tmp_path: Path) -> None:
    ds = Dataset("multitq", questions())
    report = evaluate(Lookup(TABLE), ds, kg(), tmp_path, progress=False)
    data = json.loads((tmp_path / "report.json").read_text())
    assert data == report.to_dict()
    assert {"n", "metrics", "breakdown", "supported", "method", "dataset", "usage"} <= set(data)
    assert data["n"] == 4
    m = data["metrics"]
    assert m["strict_hits@1"] == 0.25 and m["strict_hits@3"] == 0.5 and m["strict_hits@10"] == 0.5
    assert m["lenient_hits@1"] == 0.75  # "2012-05-03" contains "2012 05"'s text form; "Germany" at rank 2
    assert m["answered"] == 0.75 and m["strict_hits@1_answered"] == pytest.approx(1 / 3)
    assert data["supported"]["n"] == 3 and data["supported"]["strict_hits@1"] == pytest.approx(1 / 3)
    assert data["method"] == {"method": "lookup", "config": {"table": TABLE}}
    assert data["usage"] == {
        "llm_calls_per_question": 1.5,
        "prompt_tokens_per_question": 75.0,
        "completion_tokens_per_question": 7.5,
        "parse_failures": 3,
        "cost_usd": 0.0,
        "llm_calls": 6.0,
        "cached_calls": 0.0,
    }
    assert data["breakdown"]["qlabel"]["Single"]["strict_hits@1"] == 0.5
    assert data["dataset"]["name"] == "multitq" and data["errors"] == 0
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    need = {
        "qid", "question", "predictions", "gold", "strict_hit", "lenient_hit", "evidence", "trace", "usage",
        "latency_s", "abstained", "reason", "qtype", "answer_type", "time_level", "types", "supported",
    }  # fmt: skip
    assert all(need <= set(r) for r in rows) and [r["qid"] for r in rows] == ["1", "2", "3", "4"]
    assert rows[0]["evidence"][0]["subject"] in {"Iraq", "China", "France"}
    assert rows[3]["abstained"] and rows[3]["reason"] == "unknown question"
    assert (
        (tmp_path / "report.md")
        .read_text()
        .startswith("# Evaluation report\n\nlookup on multitq: all 4 questions.")
    )
    assert (tmp_path / "breakdown.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_resume_after_interrupt_has_no_duplicates(tmp_path: Path) -> None:
    qs = questions()
    method = Lookup(TABLE, stop_at="3")
    with pytest.raises(KeyboardInterrupt):
        evaluate(method, qs, kg(), tmp_path, progress=False)
    assert [r.qid for r in read_results(tmp_path)] == ["1", "2"]
    again = Lookup(TABLE)
    report = evaluate(again, qs, kg(), tmp_path, progress=False)
    assert [s[0] for s in again.seen] == ["3", "4"]  # only the questions not yet done
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["qid"] for x in lines) == ["1", "2", "3", "4"]
    assert report.n == 4 and report.selection["resumed"] == 2
    third = Lookup(TABLE)
    evaluate(third, qs, kg(), tmp_path, progress=False)
    assert third.seen == [] and len((tmp_path / "results.jsonl").read_text().splitlines()) == 4
    fresh = Lookup(TABLE)
    evaluate(fresh, qs, kg(), tmp_path, progress=False, resume=False)
    assert len(fresh.seen) == 4 and len((tmp_path / "results.jsonl").read_text().splitlines()) == 4


def test_resume_drops_a_torn_line(tmp_path: Path) -> None:
    evaluate(Lookup(TABLE), questions()[:2], kg(), tmp_path, progress=False)
    with (tmp_path / "results.jsonl").open("a") as fh:
        fh.write('{"qid": "3", "question": "Who did Fra')  # interrupted mid-write
    again = Lookup(TABLE)
    evaluate(again, questions(), kg(), tmp_path, progress=False)
    assert [s[0] for s in again.seen] == ["3", "4"]
    assert [r.qid for r in read_results(tmp_path, strict=True)] == ["1", "2", "3", "4"]


def test_resume_with_another_config_is_refused(tmp_path: Path) -> None:
    evaluate(Lookup(TABLE), questions()[:1], kg(), tmp_path, progress=False)
    with pytest.raises(ConfigError, match="no-resume"):
        evaluate(Lookup({"1": ["x"]}), questions(), kg(), tmp_path, progress=False)
    evaluate(Lookup({"1": ["x"]}), questions(), kg(), tmp_path, progress=False, resume=False)


def test_method_errors_become_rows(tmp_path: Path) -> None:
    report = evaluate(Lookup(TABLE, fail_on="2"), questions(), kg(), tmp_path, progress=False)
    assert report.errors == 1 and report.n == 4
    assert (
        report.error_examples[0]["qid"] == "2" and "RuntimeError: boom" in report.error_examples[0]["error"]
    )
    assert report.errors_by_type == {"RuntimeError": 1}
    row = {r.qid: r for r in read_results(tmp_path)}["2"]
    assert str(row.error).startswith("RuntimeError: boom") and row.error_type == "RuntimeError"
    assert row.error_kind is ErrorKind.OTHER and row.outcome is Outcome.ERROR
    assert not row.strict_hit and not row.abstained and row.reason == ""  # not an abstention
    md = (tmp_path / "report.md").read_text()
    assert "1 of 4 questions FAILED with errors (RuntimeError × 1" in md.split("| metric |")[0]


def test_context_questions_use_their_own_kg(tmp_path: Path) -> None:
    ctx = [Fact("Ada Lovelace", "father", "Lord Byron")]
    qs = [
        Question(qid="a", text="Who was Ada Lovelace's father?", answers=["Lord Byron"], context=ctx),
        Question(qid="b", text="Who visited Iraq?", answers=["Jack Straw"]),
    ]
    method = Lookup({"a": ["Lord Byron"], "b": ["Jack Straw"]})
    report = evaluate(method, qs, kg(), tmp_path, progress=False)
    assert method.seen == [("a", "context:a", 1), ("b", "toy", 3)]
    assert report.metrics["strict_hits@1"] == 1.0 and report.supported["n"] == 2
    assert report.dataset["context_questions"] == 1


def test_kg_from_dataset_path_sampling_and_no_kg(tmp_path: Path) -> None:
    kg_file = tmp_path / "kg.tsv"
    kg_file.write_text("Q1\tP54\tQ10\t1994\t2000\n", "utf-8")
    qs = [
        Question(qid=str(i), text="?", answers=["Q10"], entities=["Q1"], qtype="ab"[i % 2]) for i in range(6)
    ]
    report = evaluate(FirstObject(), Dataset("cron", qs, kg_file), None, tmp_path / "a", progress=False)
    assert report.metrics["strict_hits@1"] == 1.0 and report.dataset["kg"] == str(kg_file)
    sampled = evaluate(
        FirstObject(), qs, kg_file, tmp_path / "b", limit=4, sample="stratified", seed=2, progress=False
    )
    assert sampled.n == 4 and sampled.selection == {
        "limit": 4,
        "sample": "stratified",
        "seed": 2,
        "resumed": 0,
        "retried_errors": 0,
    }
    empty = evaluate(FirstObject(), qs[:2], None, tmp_path / "c", progress=False)
    assert empty.metrics["strict_hits@1"] == 0.0 and empty.dataset["kg"] is None


def test_compare_runs(tmp_path: Path) -> None:
    evaluate(Lookup(TABLE), questions(), kg(), tmp_path / "a", progress=False)
    evaluate(Lookup({"4": ["Portugal"]}), questions()[1:], kg(), tmp_path / "b", progress=False)
    result = compare_runs(tmp_path / "a", tmp_path / "b")
    assert result["n_common"] == 3 and result["only_in_a"] == 1
    assert (result["mcnemar"]["b"], result["mcnemar"]["c"]) == (0, 1)
    assert result["mcnemar"]["p_value"] == 1.0


def test_the_run_title_says_the_method_settings_llm_split_and_sample() -> None:
    from tkgqa.eval.report import latency_line, run_title

    method = {"method": "ari", "llm": None, "requested": {"policy": "symbolic", "top_k": 5, "llm": None}}
    dataset = {"name": "demo", "n_available": 60, "meta": {"split": "test"}}
    selection = {"limit": 10, "sample": "stratified", "seed": 1}
    assert run_title(method, dataset, 10, selection) == (
        "ari (policy=symbolic, top_k=5; no LLM) on demo (test split): 10 of 60 questions, stratified sample "
        "(seed 1)"
    )
    llm = {"method": "llm_only", "llm": "openai:gpt-4o-mini", "requested": {"llm": "openai:gpt-4o-mini"}}
    assert run_title(llm, {"name": "multitq"}, 50, {"limit": 50, "sample": "first"}).startswith(
        "llm_only (LLM openai:gpt-4o-mini) on multitq: 50 questions, the first ones"
    )
    skewed = latency_line({"mean_s": 2.0, "median_s": 0.1, "p95_s": 0.5})
    assert "mean is above the p95" in skewed and "median 0.100 s" in skewed
    assert run_title(method, dataset, 50, {"limit": 50, "sample": None}).endswith(
        "50 of 60 questions, the first ones"
    )
    assert "above" not in latency_line({"mean_s": 0.2, "median_s": 0.1, "p95_s": 0.5})


def test_the_latency_note_needs_a_mean_shown_above_the_p95_shown() -> None:
    from tkgqa.eval.report import latency_line

    tied = latency_line({"mean_s": 0.00124, "median_s": 0.0011, "p95_s": 0.00121})  # all shown as 0.001
    assert tied == "Latency per question: median 0.001 s, p95 0.001 s, mean 0.001 s."
    above = latency_line({"mean_s": 0.0016, "median_s": 0.0011, "p95_s": 0.00121})
    assert "p95 0.001 s, mean 0.002 s (the mean is above the p95" in above
