"""CIK-LLM's experiments as evaluations (``tkgqa eval``, CliRunner): the TKG stream's snapshots
(``--as-of 2000``: no future information, recorded in report.json), the obfuscated-entity run
(``--obfuscate``: Q′ over K_all ∪ K′, scored), the preset and deviations and the path-selection counts in
report.json. No network, no model: the ``fake`` LLM and the offline symbolic method."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app

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
    {
        "qid": "q3",
        "question": "Who was the head coach of Tottenham Hotspur F.C.?",
        "answers": ["Glenn Hoddle"],
    },
]


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    kg = tmp_path / "kg.tsv"
    kg.write_text("".join("\t".join(row) + "\n" for row in KG_ROWS), encoding="utf-8")
    qs = tmp_path / "questions.jsonl"
    qs.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return kg, qs


def run_eval(files: tuple[Path, Path], out: Path, *args: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    _load_commands()
    kg, qs = files
    base = ["eval", "--dataset", "jsonl", "--data-dir", str(qs), "--kg", str(kg), "--no-progress"]
    result = CliRunner().invoke(app, [*base, "--output", str(out), *args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    report = json.loads((out / "report.json").read_text())
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line]
    return report, rows


def test_as_of_snapshot_is_recorded_and_leaks_no_future(files: tuple[Path, Path], tmp_path: Path) -> None:
    report, rows = run_eval(
        files, tmp_path / "k2000", "--method", "cik:lexical,fallback=true", "--llm", "fake", "--as-of", "2000"
    )
    view = report["kg_view"]
    assert view["setting"] == "K<2000" and view["as_of"] == "2000"
    assert (view["live_facts"], view["facts"], view["clipped"]) == (5, 3, 1)  # Tottenham 1992-2004 clipped
    assert report["run_config"]["as_of"] == "2000"
    q1 = next(r for r in rows if r["qid"] == "q1")
    spurs = [f for f in q1["evidence"] if f["object"] == "Tottenham Hotspur F.C."]
    assert spurs and spurs[0]["end"] is None  # "still true in 2000", not the real end 2004
    assert all(f["end"] is None or f["end"] < "2000" for r in rows for f in r["evidence"])
    assert all(f["start"] < "2000" for r in rows for f in r["evidence"])


def test_as_of_all_is_k_all(files: tuple[Path, Path], tmp_path: Path) -> None:
    report, _ = run_eval(files, tmp_path / "kall", "--method", "symbolic", "--as-of", "all")
    assert report["kg_view"]["setting"] == "K_all" and report["kg_view"]["facts"] == 5


def test_preset_deviations_and_path_selection_counts_in_report(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    # The fake LLM's "OK" is no relation path: path selection fails for every question (paper: no fallback).
    report, rows = run_eval(files, tmp_path / "paper", "--method", "cik", "--llm", "fake")
    method = report["method"]
    assert method["preset"] == "paper" and method["deviations"] == []
    assert method["config"]["elide_times"] is False and method["config"]["delta2_rule"] == "none"
    summary = report["method_metrics"]
    assert summary["questions"] == 3
    assert summary["path_selection_failed"] == summary["abstained_path_selection_failed"] == 3
    assert report["metrics"]["answered"] == 0.0
    assert all(r["reason"].startswith("path selection failed") for r in rows)

    report, _ = run_eval(files, tmp_path / "ours", "--method", "cik:ours", "--llm", "fake")
    assert report["method"]["preset"] == "ours"
    assert {d.split("=")[0] for d in report["method"]["deviations"]} >= {
        "elide_times",
        "time_pruning",
        "delta2_rule",
        "fallback",
        "max_relations_per_hop",
    }
    assert report["method_metrics"]["fallback_used"] == 3
    assert report["method_metrics"]["abstained_path_selection_failed"] == 0


def test_obfuscated_run_is_an_evaluation_with_accuracy(files: tuple[Path, Path], tmp_path: Path) -> None:
    plain, _ = run_eval(files, tmp_path / "plain", "--method", "symbolic")
    report, rows = run_eval(files, tmp_path / "obf", "--method", "symbolic", "--obfuscate")
    view = report["kg_view"]
    assert view["obfuscated"] is True and view["setting"] == "K_all ∪ K′"
    assert (view["source_facts"], view["live_facts"], view["entities_renamed"]) == (5, 10, 6)
    assert report["dataset"]["meta"]["obfuscated"] is True and report["run_config"]["obfuscate"] is True
    by_qid = {r["qid"]: r for r in rows}
    assert by_qid["q1"]["question"] == "Which sports team was Rendar Rtonande a member of in 2004?"
    assert by_qid["q3"]["gold"] == ["Enngl Dlehod"] and by_qid["q3"]["strict_hit"]  # K′ answer, scored
    assert by_qid["q2"]["gold"] == ["1993"]  # times are not obfuscated
    assert report["metrics"]["strict_hits@1"] == plain["metrics"]["strict_hits@1"] > 0  # same structure


def test_bad_as_of_is_a_clear_error(files: tuple[Path, Path], tmp_path: Path) -> None:
    _load_commands()
    kg, qs = files
    base = ["eval", "--dataset", "jsonl", "--data-dir", str(qs), "--kg", str(kg), "--method", "symbolic"]
    result = CliRunner().invoke(
        app, [*base, "--as-of", "yesterday", "--output", str(tmp_path / "bad"), "--no-progress"]
    )
    assert result.exit_code != 0
    assert "--as-of" in (result.output + str(result.exception))
