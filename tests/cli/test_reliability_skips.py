"""Issue #29: every command that loads a KG says what it skipped, once, on stderr and in its JSON output
(``tkgqa ask --kg FILE`` with a ``NaN`` date; ``tkgqa kg info``; ``tkgqa eval``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_run import run_cli

GOOD = "Barack_Obama\tMake_a_visit\tChina\t2014-11-10\n"


@pytest.fixture
def kg_file(tmp_path: Path) -> Path:
    path = tmp_path / "kg.tsv"
    path.write_text(GOOD + "Ann\tmeet\tBob\tNaN\n" + GOOD.replace("China", "Cuba"), encoding="utf-8")
    return path


def _skip_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "skipped" in line and "'NaN'" in line]


@pytest.mark.parametrize("as_json", [False, True])
def test_ask_says_what_the_kg_skipped_once(
    kg_file: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    args = ["ask", "Who visited China in November 2014?", "--kg", str(kg_file)] + (
        ["--json"] if as_json else []
    )
    code, out, err = run_cli(args, capsys)
    assert code == 0
    (line,) = _skip_lines(err)
    assert line.startswith("warning:") and f"{kg_file}:2" in line
    if as_json:
        warnings = json.loads(out)["warnings"]
        assert len(warnings) == 1 and "'NaN'" in warnings[0]


def test_kg_info_and_eval_say_it_once_too(
    kg_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(["kg", "info", str(kg_file)], capsys)
    assert code == 0 and len(_skip_lines(err)) == 1
    code, out, err = run_cli(["kg", "info", str(kg_file), "--json"], capsys)
    assert code == 0 and len(_skip_lines(err)) == 1 and "'NaN'" in json.loads(out)["warnings"][0]
    data = tmp_path / "data"
    data.mkdir()
    row = {"qid": "q1", "question": "Who visited China in November 2014?", "answers": ["Barack Obama"]}
    (data / "test.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    args = ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--kg", str(kg_file), "--method",
            "symbolic", "--output", str(tmp_path / "run"), "--no-progress", "--json"]  # fmt: skip
    code, out, err = run_cli(args, capsys)
    assert code == 0 and len(_skip_lines(err)) == 1
    assert any("'NaN'" in w for w in json.loads(out)["warnings"])
