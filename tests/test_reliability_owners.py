"""Issue #29: output folders are owned by the command that wrote them (``.tkgqa-owner.json``): ``tkgqa eval``,
``tkgqa reproduce`` and ``tkgqa lpkg data`` refuse a folder holding files another command (or nothing of
ours) wrote unless ``--force``; ``tkgqa llm export``/``--record`` never replace a file that is not a
cassette. A run folder written before the marker (its ``run.json``/``results.jsonl``) still resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_run import run_cli
from tkgqa.datasets.base import Question
from tkgqa.errors import ConfigError
from tkgqa.eval.reproduce import reproduce
from tkgqa.eval.runner import evaluate
from tkgqa.userfiles import OWNER_FILE

QUESTIONS = [Question(qid="q1", text="Who visited China in November 2014?", answers=("Barack Obama",))]


def test_reproduce_never_replaces_files_it_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "reproduce.md").write_text("my notes\n", encoding="utf-8")
    (out / "reproduce.json").write_text('{"mine": true}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="did not write"):
        reproduce("ari", table="T1", output=out, data_root=tmp_path / "nodata")
    assert (out / "reproduce.md").read_text(encoding="utf-8") == "my notes\n"
    assert (out / "reproduce.json").read_text(encoding="utf-8") == '{"mine": true}\n'
    reproduce("ari", table="T1", output=out, data_root=tmp_path / "nodata", force=True)
    assert "cells" in json.loads((out / "reproduce.json").read_text(encoding="utf-8"))
    reproduce("ari", table="T1", output=out, data_root=tmp_path / "nodata")  # its own now: again is fine


def test_eval_and_reproduce_do_not_take_each_others_folders(tmp_path: Path) -> None:
    run = tmp_path / "run"
    evaluate("symbolic", QUESTIONS, "demo", run, progress=False)
    assert json.loads((run / OWNER_FILE).read_text(encoding="utf-8")) == {"command": "tkgqa eval"}
    with pytest.raises(ConfigError, match="written by `tkgqa eval`"):
        reproduce("ari", table="T1", output=run, data_root=tmp_path / "nodata")
    rep = tmp_path / "rep"
    reproduce("ari", table="T1", output=rep, data_root=tmp_path / "nodata")
    with pytest.raises(ConfigError, match="written by `tkgqa reproduce`"):
        evaluate("symbolic", QUESTIONS, "demo", rep, progress=False)


def test_eval_refuses_a_folder_of_other_files_unless_forced(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.md").write_text("my report\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="did not write"):
        evaluate("symbolic", QUESTIONS, "demo", folder, progress=False)
    assert (folder / "report.md").read_text(encoding="utf-8") == "my report\n"
    assert evaluate("symbolic", QUESTIONS, "demo", folder, progress=False, force=True).n == 1


def test_a_run_folder_from_before_the_marker_still_resumes(tmp_path: Path) -> None:
    run = tmp_path / "old"
    evaluate("symbolic", QUESTIONS, "demo", run, progress=False)
    (run / OWNER_FILE).unlink()  # as `tkgqa eval` wrote it before folders were marked
    (run / ".tkgqa-eval.lock").unlink()
    report = evaluate("symbolic", QUESTIONS, "demo", run, progress=False)
    assert report.selection["resumed"] == 1 and (run / OWNER_FILE).is_file()


def test_llm_export_never_replaces_a_file_that_is_not_a_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    evaluate("symbolic", QUESTIONS, "demo", run, progress=False)
    mine = tmp_path / "notes.txt"
    mine.write_text("mine\n", encoding="utf-8")
    code, _, err = run_cli(["llm", "export", str(run), "--output", str(mine)], capsys)
    assert code == 2 and "not a cassette" in err and "Traceback" not in err
    assert mine.read_text(encoding="utf-8") == "mine\n"
    code, _, err = run_cli(["llm", "export", str(run), "--output", str(run / "results.jsonl")], capsys)
    assert code == 2 and "input file" in err
    code, _, err = run_cli(["llm", "export", str(run), "--output", str(tmp_path / "no" / "c.jsonl")], capsys)
    assert code == 2 and "does not exist" in err


def test_eval_record_is_checked_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "notes.txt"
    mine.write_text("mine\n", encoding="utf-8")
    args = ["eval", "--dataset", "demo", "--method", "symbolic", "--limit", "1", "--no-progress",
            "--output", str(tmp_path / "run"), "--record", str(mine)]  # fmt: skip
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "not a cassette" in err
    assert mine.read_text(encoding="utf-8") == "mine\n" and not (tmp_path / "run").exists()


def test_lpkg_data_refuses_a_folder_it_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "data"
    out.mkdir()
    (out / "train.jsonl").write_text("mine\n", encoding="utf-8")
    code, _, err = run_cli(["lpkg", "data", "--kg", "demo", "--out", str(out), "--per-pattern", "1"], capsys)
    assert code == 2 and "did not write" in err and "Traceback" not in err
    assert (out / "train.jsonl").read_text(encoding="utf-8") == "mine\n"
