"""ARI through ``tkgqa eval`` (CliRunner): report.json names the preset, every deviation in force, the choices
the paper leaves open and the embedder fallback. No network, no model: the offline oracle policy and the
hashing similarity the test suite forces (``$TKGQA_ARI_EMBEDDER``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app

# Invented names: no benchmark fact or question.
KG_ROWS = [
    ("Alice", "Make a visit", "Freedonia", "2010-01-05", "2010-01-05"),
    ("Bob", "Make a visit", "Freedonia", "2011-03-02", "2011-03-02"),
    ("Alice", "Meet", "Zed", "2011-04-01", "2011-04-01"),
    ("Erin", "Criticize", "Freedonia", "2013-05-05", "2013-05-05"),
]
QUESTIONS = [
    {"qid": "a1", "question": "Who visited Freedonia in 2011?", "answers": ["Bob"]},
    {"qid": "a2", "question": "When did Erin criticize Freedonia?", "answers": ["2013-05-05"]},
]


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    kg = tmp_path / "kg.tsv"
    kg.write_text("".join("\t".join(row) + "\n" for row in KG_ROWS), encoding="utf-8")
    qs = tmp_path / "questions.jsonl"
    qs.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return kg, qs


def run_eval(files: tuple[Path, Path], out: Path, *args: str) -> dict[str, Any]:
    _load_commands()
    kg, qs = files
    base = ["eval", "--dataset", "jsonl", "--data-dir", str(qs), "--kg", str(kg), "--no-progress"]
    base += ["--method", "ari", "--policy", "oracle"]
    result = CliRunner().invoke(app, [*base, "--output", str(out), *args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    report: dict[str, Any] = json.loads((out / "report.json").read_text("utf-8"))
    assert report["n"] == len(QUESTIONS)
    return report


def test_report_json_names_the_paper_preset_and_its_deviations(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    method = run_eval(files, tmp_path / "paper")["method"]
    assert method["method"] == "ari" and method["preset"] == "paper"
    config = method["config"]
    assert (config["action_space"], config["filter_mode"], config["examples"]) == ("paper", "eq3", "paper")
    assert config["truncate_results"] is False and config["fallback_answer"] is False
    # the only deviation of the paper preset here is the lexical similarity the suite forces
    assert [d.split("=")[0] for d in method["deviations"]] == ["embedder"]
    assert any(u.startswith("top_k=15: ours") for u in method["unspecified_by_paper"])


def test_report_json_names_preset_ours_and_every_deviation(files: tuple[Path, Path], tmp_path: Path) -> None:
    method = run_eval(files, tmp_path / "ours", "--method-option", "preset=ours")["method"]
    assert method["preset"] == "ours" and method["config"]["action_space"] == "reference"
    keys = {d.split("=")[0] for d in method["deviations"]}
    assert keys >= {"embedder", "action_space", "filter_mode", "truncate_results", "fallback_answer"}


def test_report_json_records_an_explicit_option_against_the_paper_preset(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    method = run_eval(files, tmp_path / "mixed", "--method-option", "action_space=reference")["method"]
    assert method["preset"] == "paper"
    assert any(d.startswith("action_space=reference") for d in method["deviations"])
    assert not any(d.startswith("filter_mode") for d in method["deviations"])
