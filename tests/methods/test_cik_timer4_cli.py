"""``tkgqa analyze coverage`` (CliRunner): the coverage.json contract for both methods, on a hand-written
KG and question file written by the test, and on the bundled demo data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.errors import ConfigError

KG_ROWS = [
    ("Darren Anderton", "member of sports team", "Portsmouth F.C.", "1990", "1992"),
    ("Darren Anderton", "member of sports team", "Tottenham Hotspur F.C.", "1992", "2004"),
    ("Darren Anderton", "member of sports team", "Birmingham City F.C.", "2004", "2005"),
    ("Darren Anderton", "award received", "PFA Team of the Year", "1993", "1993"),
    ("Glenn Hoddle", "head coach", "Tottenham Hotspur F.C.", "2001", "2003"),
]
QUESTIONS = [
    {
        "qid": "q1",
        "question": "Which sports team was Darren Anderton a member of in 2004?",
        "answers": ["Birmingham City F.C."],
    },
    {"qid": "q2", "question": "When did Darren Anderton receive an award?", "answers": ["1993"]},
]


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    kg = tmp_path / "kg.tsv"
    kg.write_text("".join("\t".join(row) + "\n" for row in KG_ROWS), encoding="utf-8")
    qs = tmp_path / "questions.jsonl"
    qs.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return kg, qs


def run(*args: str) -> dict[str, Any]:
    _load_commands()
    out = Path(args[args.index("--output") + 1])
    result = CliRunner().invoke(app, ["analyze", "coverage", *args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return json.loads((out / "coverage.json").read_text())


def test_timer4_coverage_json(files: tuple[Path, Path], tmp_path: Path) -> None:
    kg, qs = files
    data = run(
        "--dataset",
        "jsonl",
        "--data-dir",
        str(qs),
        "--kg",
        str(kg),
        "--method",
        "timer4",
        "--embedder",
        "hashing",
        "--output",
        str(tmp_path / "t4"),
    )
    for stage in ("fks", "tks", "tks_rerank"):
        assert set(data[stage]) == {"5", "10", "15", "20"}
        assert all(0.0 <= v <= 1.0 for v in data[stage].values())
    assert data["fks"]["5"] == 1.0  # 5 facts: all of them retrieved
    assert data["questions"] == 2
    assert (tmp_path / "t4" / "per_question.jsonl").read_text().count("\n") == 2


def test_cik_coverage_json(files: tuple[Path, Path], tmp_path: Path) -> None:
    kg, qs = files
    data = run(
        "--dataset",
        "jsonl",
        "--data-dir",
        str(qs),
        "--kg",
        str(kg),
        "--method",
        "cik",
        "--limit",
        "2",
        "--output",
        str(tmp_path / "cik"),
    )
    assert set(data["facts"]) == {"retrieved", "truncated", "time_pruned", "pruned"}
    assert {"uncompressed", "compressed"} <= set(data["tokens"])
    assert data["answer_coverage"] == 1.0
    assert data["facts"]["retrieved"] >= data["facts"]["pruned"] > 0
    assert data["path_selection"].startswith("lexical")


def test_demo_dataset_and_obfuscation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    data = run(
        "--dataset",
        "demo",
        "--method",
        "cik",
        "--limit",
        "5",
        "--obfuscate",
        "--output",
        str(tmp_path / "obf"),
    )
    assert data["meta"]["obfuscated"] is True
    assert 0.0 <= data["answer_coverage"] <= 1.0


def test_unknown_method_fails_cleanly(tmp_path: Path) -> None:
    _load_commands()
    result = CliRunner().invoke(
        app, ["analyze", "coverage", "--dataset", "demo", "--method", "ari", "--output", str(tmp_path)]
    )
    assert result.exit_code != 0


def test_coverage_refuses_an_output_folder_of_other_files_before_working(tmp_path: Path) -> None:
    """``--output`` a folder of the user's files: its coverage.json was overwritten (and a file as --output
    was a FileExistsError traceback); now refused before the analysis runs, unless --force."""
    _load_commands()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "coverage.json").write_text("keep", encoding="utf-8")
    args = ["analyze", "coverage", "--dataset", "demo", "--method", "timer4", "--limit", "2", "--embedder"]
    result = CliRunner().invoke(app, [*args, "hashing", "--output", str(mine)])
    assert isinstance(result.exception, ConfigError) and "did not write" in str(result.exception)
    assert (mine / "coverage.json").read_text(encoding="utf-8") == "keep"
    a_file = tmp_path / "f.txt"
    a_file.write_text("keep", encoding="utf-8")
    result = CliRunner().invoke(app, [*args, "hashing", "--output", str(a_file)])
    assert isinstance(result.exception, ConfigError) and "is a file" in str(result.exception)
    assert a_file.read_text(encoding="utf-8") == "keep"
    forced = CliRunner().invoke(app, [*args, "hashing", "--output", str(mine), "--force"])
    assert forced.exit_code == 0, forced.output
    assert json.loads((mine / "coverage.json").read_text(encoding="utf-8"))["meta"]["questions"] == 2
