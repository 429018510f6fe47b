"""``tkgqa kg info|query|neighbors``: the JSON contracts the maintainers' checks rely on, and errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app, main

_load_commands()
runner = CliRunner()
FACT_KEYS = {"subject", "relation", "object", "start", "end"}

QUADS = (
    "Barack_Obama\tMake_a_visit\tJapan\t2014-11-10\n"
    "Barack_Obama\tMake_a_visit\tChina\t2014-11-12\n"
    "Barack_Obama\tMake_a_visit\tCuba\t2015-03-20\n"
    "Barack_Obama\tMake_a_visit\tGermany\t2015-04-01\n"
    "Citizen_(Thailand)\tReject\tThailand\t2005-01-01\n"
)


@pytest.fixture
def kg_file(tmp_path: Path) -> str:
    path = tmp_path / "kg.txt"
    path.write_text(QUADS, encoding="utf-8")
    return str(path)


def run_json(*args: str) -> Any:
    result = runner.invoke(app, ["kg", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_info_json(kg_file: str) -> None:
    info = run_json("info", kg_file)
    assert info["facts"] == 5 and info["entities"] == 7 and info["relations"] == 2
    assert (info["start"], info["end"]) == ("2005-01-01", "2015-04-01")
    assert info["top_relations"][0] == {"relation": "Make_a_visit", "label": "Make a visit", "count": 4}
    assert info["format"] == "quadruples"


def test_info_demo_and_table() -> None:
    info = run_json("info", "demo")
    assert info["facts"] >= 300 and info["name"] == "demo"
    result = runner.invoke(app, ["kg", "info", "demo"])
    assert result.exit_code == 0 and "facts" in result.stdout


VISITS = ["--head", "Barack_Obama", "--rel", "Make_a_visit"]
TAIL, HEAD, TIME = ["--op", "get_tail_entity"], ["--op", "get_head_entity"], ["--op", "get_time"]
BETWEEN = ["--op", "get_between"]


@pytest.mark.parametrize(
    ("args", "objects"),
    [
        ([*TAIL, *VISITS], ["Japan", "China", "Cuba", "Germany"]),
        ([*TAIL, *VISITS, "--time", "2015"], ["Cuba", "Germany"]),
        ([*TAIL, "--head", "barack obama", "--rel", "make a visit", "--time", "Mar 2015"], ["Cuba"]),
        ([*HEAD, "--tail", "Thailand", "--rel", "Reject"], ["Thailand"]),
        ([*TIME, *VISITS, "--tail", "Cuba"], ["Cuba"]),
        (["--op", "get_before", *VISITS, "--time", "2015"], ["Japan", "China"]),
        (["--op", "get_after", *VISITS, "--time", "2015-03"], ["Germany"]),
        ([*BETWEEN, *VISITS[:2], "--time", "2014-11-11", "--time2", "2015-03"], ["China", "Cuba"]),
        (["--op", "get_during", "--head", "Barack_Obama", "--time", "2014-11"], ["Japan", "China"]),
        (["--op", "get_first", *VISITS], ["Japan"]),
        (["--op", "get_last", *VISITS], ["Germany"]),
        ([*TAIL, *VISITS, "--limit", "1"], ["Japan"]),
    ],
)  # fmt: skip
def test_query_json_contract(kg_file: str, args: list[str], objects: list[str]) -> None:
    facts = run_json("query", kg_file, *args)
    assert isinstance(facts, list) and all(set(f) == FACT_KEYS for f in facts)
    assert [f["object"] for f in facts] == objects


def test_query_names_and_times_as_in_source(kg_file: str) -> None:
    (fact,) = run_json("query", kg_file, "--op", "get_head_entity", "--tail", "Thailand", "--rel", "Reject")
    assert fact == {
        "subject": "Citizen_(Thailand)",
        "relation": "Reject",
        "object": "Thailand",
        "start": "2005-01-01",
        "end": "2005-01-01",
    }


def test_query_demo_interval_facts() -> None:
    facts = run_json(
        "query",
        "demo",
        "--op",
        "get_tail_entity",
        "--head",
        "Barack Obama",
        "--rel",
        "position held",
        "--time",
        "2010",
    )
    assert [(f["object"], f["start"], f["end"]) for f in facts] == [
        ("President of the United States", "2009-01-20", "2017-01-20")
    ]


def test_neighbors_json(kg_file: str) -> None:
    out = run_json("neighbors", kg_file, "Barack_Obama")
    assert out["entity"] == "Barack_Obama" and out["n_facts"] == 4
    assert set(out["neighbors"]) == {"Japan", "China", "Cuba", "Germany"}
    assert (out["first"], out["last"]) == ("2014-11-10", "2015-04-01")
    assert out["relations_by_hop"]["1"] == ["Make_a_visit"]
    assert all(set(f) == FACT_KEYS for f in out["facts"])
    table = runner.invoke(app, ["kg", "neighbors", kg_file, "Thailand"])
    assert table.exit_code == 0 and "Citizen (Thailand)" in table.stdout


def cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as info:
        main(["kg", *args])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    return err


def test_unknown_entity_is_a_one_line_error_with_suggestions(
    kg_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = cli_error(
        capsys, "query", kg_file, "--op", "get_tail_entity", "--head", "Barak Obama", "--rel", "Make_a_visit"
    )
    assert "entity 'Barak Obama' not found" in err and "did you mean: 'Barack_Obama'" in err
    err = cli_error(capsys, "neighbors", kg_file, "Thailnd")
    assert "did you mean: 'Thailand'" in err
    err = cli_error(
        capsys, "query", kg_file, "--op", "get_tail_entity", "--head", "Barack_Obama", "--rel", "Visit"
    )
    assert "relation 'Visit' not found" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--op", "get_everything"], "unknown operator"),
        (["--op", "get_tail_entity", "--head", "Barack_Obama"], "needs --head and --rel"),
        (
            ["--op", "get_time", "--head", "Barack_Obama", "--rel", "Make_a_visit"],
            "needs --head, --rel and --tail",
        ),
        (["--op", "get_before", "--head", "Barack_Obama"], "needs --time"),
        (["--op", "get_between", "--head", "Barack_Obama", "--time", "2014"], "--time2"),
        (["--op", "get_first", "--rel", "Make_a_visit"], "--head and/or --tail"),
        (["--op", "get_before", "--head", "Barack_Obama", "--time", "someday"], "cannot parse time"),
    ],
)
def test_query_argument_errors(
    kg_file: str, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert message in cli_error(capsys, "query", kg_file, *args)


def test_missing_file_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "does not exist" in cli_error(capsys, "info", str(tmp_path / "nope.txt"))


def test_installed_entry_point(kg_file: str) -> None:
    """The real process: JSON on stdout, exit 0; unknown entity → exit 2 and one line on stderr."""
    cmd = [
        sys.executable,
        "-m",
        "tkgqa",
        "kg",
        "query",
        kg_file,
        "--op",
        "get_first",
        "--head",
        "Barack_Obama",
        "--json",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["object"] == "Japan"
    bad = subprocess.run(
        [*cmd[:6], "--op", "get_first", "--head", "Obama_B"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_errors_through_the_typer_app(kg_file: str) -> None:
    """Invoking ``app`` directly (no ``main`` wrapper) also gives exit status 2 and one stderr line."""
    result = runner.invoke(app, ["kg", "neighbors", kg_file, "Thailnd", "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and "did you mean: 'Thailand'" in result.stderr


def test_a_dataset_name_is_read_as_ask_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tkgqa kg info|query|neighbors multitq`` open the KG that ``tkgqa ask --kg multitq`` opens: the
    dataset's KG file under the data root (before, ``kg`` said "KG file 'multitq' does not exist")."""
    folder = tmp_path / "data" / "multitq"
    (folder / "kg").mkdir(parents=True)
    (folder / "questions").mkdir()
    (folder / "kg" / "full.txt").write_text(QUADS, encoding="utf-8")
    question = {
        "quid": 1,
        "question": "Who visited Cuba?",
        "answers": ["Barack_Obama"],
        "answer_type": "entity",
    }
    (folder / "questions" / "test.json").write_text(json.dumps([question]), encoding="utf-8")
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "data"))
    assert run_json("info", "multitq")["facts"] == 5
    found = run_json(
        "query", "multitq", "--op", "get_tail_entity", "--head", "Barack_Obama", "--rel", "Make_a_visit"
    )
    assert {f["object"] for f in found} == {"Japan", "China", "Cuba", "Germany"}
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "elsewhere"))
    result = runner.invoke(app, ["kg", "info", "multitq"])
    assert result.exit_code != 0
    assert "tkgqa data fetch multitq" in result.output


def test_a_catalogued_kg_without_a_question_loader_is_read_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tkgqa data list`` lists icews14 (a KG, no question set): ``kg info icews14`` said "KG file
    'icews14' does not exist"; its whole KG (``full.txt``) is opened, a missing one names the fetch."""
    (tmp_path / "data" / "icews14").mkdir(parents=True)
    (tmp_path / "data" / "icews14" / "full.txt").write_text(QUADS, encoding="utf-8")
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "data"))
    assert run_json("info", "icews14")["facts"] == 5
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "elsewhere"))
    result = runner.invoke(app, ["kg", "info", "icews14"])
    assert result.exit_code == 2 and "tkgqa data fetch icews14" in result.output


def test_a_dataset_without_a_whole_kg_names_the_entry_that_has_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TimeQuestions' questions carry their own facts; its whole KG is the entry timequestions-kg. The
    error said "pass --kg FILE", a flag ``tkgqa kg`` does not have."""
    folder = tmp_path / "data" / "timequestions" / "questions"
    folder.mkdir(parents=True)
    question = {  # a hand-written question in the release's form
        "Id": 1,
        "Question": "when was the Eiffel Tower opened",
        "Temporal signal": ["No signal"],
        "Temporal question type": ["Temp.Ans"],
        "Answer": [{"AnswerType": "Value", "AnswerArgument": "1889-03-31T00:00:00Z"}],
    }
    (folder / "test.json").write_text(json.dumps([question]), encoding="utf-8")
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "data"))
    result = runner.invoke(app, ["kg", "info", "timequestions"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "tkgqa data fetch timequestions-kg" in said and "--kg" not in said


#: ``tkgqa kg query demo`` about Barack Obama, the operator still to name.
OBAMA_QUERY = ["query", "demo", "--head", "Barack Obama", "--op"]


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["info", "demo", "--top", "0"], "--top"),
        ([*OBAMA_QUERY, "get_tail_entity", "--rel", "spouse", "--limit", "-1"], "--limit"),
        (["neighbors", "demo", "Barack Obama", "--limit", "-1"], "--limit"),
        (["neighbors", "demo", "Barack Obama", "--hops", "0"], "--hops"),
    ],
)
def test_counts_below_one_are_usage_errors(args: list[str], flag: str) -> None:
    """``--limit -1`` dropped the last fact (a slice), ``--top -1`` the last relation, ``--hops 0`` said
    nothing: each is now refused, naming the flag."""
    result = runner.invoke(app, ["kg", *args])
    assert result.exit_code == 2 and flag in result.output, result.output


def test_neighbors_skips_hops_the_kg_does_not_reach() -> None:
    shown = runner.invoke(app, ["kg", "neighbors", "demo", "Barack Obama", "--hops", "40"]).output
    assert "relations at 1 hop(s)" in shown and "relations at 40 hop(s)" not in shown


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--op", "get_between", "--head", "Barack Obama", "--time", "2010", "--time2", "2005"], "swap them"),
        (["--op", "get_first", "--head", "Barack Obama", "--time", "2012"], "get_first takes no --time"),
        (["--op", "get_before", "--head", "Barack Obama", "--time", "2012", "--time2", "2013"], "--time2"),
        (["--op", "get_first", "--head", "Barack Obama", "--format", "bogus"], "unknown KG format 'bogus'"),
    ],
)
def test_query_refuses_what_it_would_ignore_or_answer_empty(args: list[str], said: str) -> None:
    """A reversed get_between window gave [] with exit 0; a time an operator does not read and an unknown
    --format were ignored."""
    result = runner.invoke(app, ["kg", "query", "demo", *args])
    assert result.exit_code == 2 and said in " ".join(result.output.split()), result.output
