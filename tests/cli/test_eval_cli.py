"""``tkgqa eval`` and ``tkgqa eval-compare`` through typer's CliRunner, on a small JSONL dataset + KG."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

import tkgqa.cli.eval_cmd  # noqa: F401  (registers the commands)
from cli_run import run_cli
from tkgqa.cli import app
from tkgqa.datasets import Question
from tkgqa.errors import ConfigError, DataError, LLMError
from tkgqa.kg import KGStore
from tkgqa.methods import METHODS, Answer, Method, MethodConfig

#: each test starts with an empty ``$TKGQA_HOME`` (as in the other folders of evaluation tests)
pytestmark = pytest.mark.usefixtures("isolated_home")


class EchoConfig(MethodConfig):
    llm: str | None = None
    policy: str | None = None


class KGObject(Method):
    """Test double: answers with the objects of the facts about the first annotated entity."""

    name: ClassVar[str] = "kg_object"

    def __init__(self, llm: str | None = None, policy: str | None = None) -> None:
        self.config = EchoConfig(llm=llm, policy=policy)

    def reason(self, question: Question, kg: KGStore) -> Answer:
        facts = kg.facts(subject=question.entities[0]) if question.entities else []
        if not facts:
            return Answer.abstain("no facts")
        return Answer([kg.label(f.object) for f in facts], evidence=facts)


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setitem(METHODS._factories, "kg_object", KGObject)
    root = tmp_path / "mydata"
    root.mkdir()
    rows = [
        {
            "qid": "q1",
            "question": "Who did Ann meet?",
            "answers": ["Bob"],
            "entities": ["Ann"],
            "qtype": "equal",
        },
        {
            "qid": "q2",
            "question": "Who did Bob meet?",
            "answers": ["Cy"],
            "entities": ["Bob"],
            "qtype": "equal",
        },
        {
            "qid": "q3",
            "question": "Who did Cy meet?",
            "answers": ["Ann"],
            "entities": ["Cy"],
            "qtype": "before",
        },
        {
            "qid": "q4",
            "question": "Who did Dee meet?",
            "answers": ["Ann"],
            "entities": ["Dee"],
            "qtype": "before",
        },
    ]
    (root / "test.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    (root / "kg.tsv").write_text("Ann\tmeet\tBob\t2001\nBob\tmeet\tCy\t2002\nCy\tmeet\tEve\t2003\n", "utf-8")
    return root


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=True)


def test_eval_writes_run_and_prints_summary(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run(
        "eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "kg_object",
        "--output", str(out), "--no-progress", "--llm", "fake",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "strict_hits@1" in result.output and "qtype: equal" in result.output
    report = json.loads((out / "report.json").read_text())
    assert report["n"] == 4 and report["metrics"]["strict_hits@1"] == 0.5
    assert report["method"]["config"] == {"llm": "fake", "policy": None}
    assert report["dataset"]["kg"] == str(data / "kg.tsv")
    assert {p.name for p in out.iterdir()} >= {"results.jsonl", "report.json", "report.md", "breakdown.png"}


def test_eval_options_json_limit_questions_and_kg(data: Path, tmp_path: Path) -> None:
    subset = tmp_path / "subset.jsonl"
    subset.write_text((data / "test.jsonl").read_text().splitlines()[2] + "\n", "utf-8")
    other_kg = tmp_path / "other.tsv"
    other_kg.write_text("Cy\tmeet\tAnn\t2005\n", "utf-8")
    result = run(
        "eval", "--dataset", "jsonl", "--data-dir", str(data), "--questions", str(subset),
        "--kg", str(other_kg), "--method", "kg_object", "--output", str(tmp_path / "r"),
        "--no-progress", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["n"] == 1 and report["metrics"]["strict_hits@1"] == 1.0
    limited = run(
        "eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "kg_object", "--limit", "2",
        "--sample", "stratified", "--seed", "1", "--output", str(tmp_path / "l"), "--no-progress", "--json",
    )  # fmt: skip
    assert limited.exit_code == 0 and json.loads(limited.output)["n"] == 2


def test_eval_bad_options(data: Path, tmp_path: Path) -> None:
    base = ["eval", "--data-dir", str(data), "--method", "kg_object", "--output", str(tmp_path / "x")]
    result = run(*base, "--dataset", "nope")
    assert isinstance(result.exception, ConfigError) and "--dataset" in str(result.exception)
    result = run(*base, "--dataset", "jsonl", "--sample", "weird")
    assert isinstance(result.exception, ConfigError)
    result = run(*base[:1], "--dataset", "jsonl", "--method", "kg_object", "--output", str(tmp_path / "y"))
    assert isinstance(result.exception, ConfigError)


def test_eval_sample_needs_a_limit_and_a_limit_keeping_all_is_no_sample(data: Path, tmp_path: Path) -> None:
    base = ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "kg_object", "--no-progress"]
    refused = run(*base, "--sample", "random", "--output", str(tmp_path / "a"))
    assert isinstance(refused.exception, ConfigError) and not (tmp_path / "a").exists()
    assert str(refused.exception) == (
        "--sample random (or 'sample' in --config) chooses which --limit questions are evaluated; without "
        "--limit every question is: give --limit N, or drop --sample"
    )
    config = tmp_path / "run.json"
    config.write_text(json.dumps({"sample": "stratified", "output": str(tmp_path / "b")}), "utf-8")
    from_file = run(*base, "--config", str(config))
    assert isinstance(from_file.exception, ConfigError) and "--sample stratified" in str(from_file.exception)
    every = run(*base, "--sample", "random", "--limit", "10", "--output", str(tmp_path / "c"), "--json")
    report = json.loads(every.stdout)
    assert every.exit_code == 0 and report["n"] == 4 and report["selection"]["sample"] is None
    sampled = run(*base, "--sample", "random", "--limit", "2", "--output", str(tmp_path / "d"), "--json")
    assert json.loads(sampled.stdout)["selection"]["sample"] == "random"


def test_eval_compare(data: Path, tmp_path: Path) -> None:
    for name in ("a", "b"):
        result = run(
            "eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "kg_object",
            "--output", str(tmp_path / name), "--no-progress",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    result = run("eval-compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json")
    assert result.exit_code == 0, result.output
    data_out = json.loads(result.output)
    assert data_out["n_common"] == 4 and data_out["mcnemar"]["b"] == data_out["mcnemar"]["c"] == 0
    table = run("eval-compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert table.exit_code == 0 and "p-value" in table.output


def test_eval_compare_refuses_a_run_without_rows_and_names_skipped_lines(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_a = tmp_path / "a"
    args = ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "kg_object", "--no-progress"]
    assert run(*args, "--output", str(run_a)).exit_code == 0
    empty, csv, torn = tmp_path / "empty.jsonl", tmp_path / "csv.jsonl", tmp_path / "torn.jsonl"
    empty.write_text("\n", "utf-8")
    csv.write_text("qid,answer\nq1,Bob\n", "utf-8")
    torn.write_text((run_a / "results.jsonl").read_text("utf-8") + '[1]\n{"qid": "q9", "ques', "utf-8")
    code, _, err = run_cli(["eval-compare", str(run_a), str(empty)], capsys)
    assert code == 2 and f"error: {empty}: the run has no rows to compare (results.jsonl is empty)" in err
    code, _, err = run_cli(["eval-compare", str(csv), str(run_a)], capsys)
    assert code == 2 and f"error: {csv}: the run has no rows to compare (line 1 and 1 more: not a" in err
    assert "share no question ids" not in err
    code, out, err = run_cli(["eval-compare", str(torn), str(run_a), "--json"], capsys)
    assert code == 0 and json.loads(out)["n_common"] == 4
    why = "not a result row (torn, not JSON or without a qid)"
    assert err.strip() == f"warning: {torn}: skipped line 5 and 1 more: {why}"


def test_eval_warns_on_missing_inputs_and_strict_refuses(data: Path, tmp_path: Path) -> None:
    (data / "kg.tsv").unlink()  # the dataset now has no KG: every question is answered over an empty one
    base = ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "kg_object", "--no-progress"]
    result = run(*base, "--output", str(tmp_path / "a"), "--json")
    assert result.exit_code == 0, result.output
    assert "warning: no KG" in result.stderr and "4 of 4 questions" in result.stderr
    report = json.loads(result.stdout)
    assert len(report["warnings"]) == 1 and report["warnings"][0].startswith("no KG")
    strict = run(*base, "--output", str(tmp_path / "b"), "--strict")
    assert isinstance(strict.exception, DataError) and "strict mode" in str(strict.exception)
    assert not (tmp_path / "b").exists()


def test_eval_with_errors_exits_1_and_resume_retries_them(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Down(KGObject):
        def reason(self, question: Question, kg: KGStore) -> Answer:
            if question.qid == "q2":
                raise LLMError("HTTP 503 from http://llm/v1: overloaded")
            return super().reason(question, kg)

    monkeypatch.setitem(METHODS._factories, "kg_object", Down)
    args = ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "kg_object", "--no-progress"]
    args += ["--output", str(tmp_path / "run")]
    result = run(*args)
    assert result.exit_code == 1
    assert "1 of 4 questions FAILED" in " ".join(result.stderr.split()) and "overloaded" in result.stderr
    assert json.loads((tmp_path / "run" / "report.json").read_text())["errors"] == 1
    assert "FAILED" in (tmp_path / "run" / "report.md").read_text()
    monkeypatch.setitem(METHODS._factories, "kg_object", KGObject)
    assert run(*args, "--no-retry-errors").exit_code == 1
    again = run(*args, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["errors"] == 0


def test_eval_resume_refuses_another_kg_questions_file_or_as_of(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "kg_object", "--no-progress"]
    args += ["--output", str(out)]
    assert run(*args, "--limit", "2").exit_code == 0
    results = (out / "results.jsonl").read_bytes()
    other_kg = tmp_path / "other.tsv"
    other_kg.write_text("Cy\tmeet\tAnn\t2005\n", "utf-8")
    subset = tmp_path / "subset.jsonl"
    subset.write_text((data / "test.jsonl").read_text().splitlines()[2] + "\n", "utf-8")
    for extra, what in (
        (["--kg", str(other_kg)], f"kg={other_kg.resolve()}"),
        (["--questions", str(subset)], f"questions_file={subset.resolve()}"),
        (["--as-of", "2002"], "as_of=2002"),
    ):
        refused = run(*args, *extra)
        assert isinstance(refused.exception, ConfigError) and what in str(refused.exception)
        assert "--no-resume" in str(refused.exception)
    assert (out / "results.jsonl").read_bytes() == results
    more = run(*args, "--json")  # the same settings and a larger selection: resumes
    assert more.exit_code == 0 and json.loads(more.stdout)["selection"]["resumed"] == 2
