"""``tkgqa llm parse``: one {id, ok, value, reason} line per input line, a summary on stderr, exit 1 when any
line was refused or bad."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_run import run_cli


def write(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8"
    )
    return path


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_line_is_answered_and_bad_lines_say_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp = write(
        tmp_path / "in.jsonl",
        [
            {"id": 1, "response": "[People's Republic of China, Palau]"},
            {"id": "b", "response": "['Alpha', 'Beta', 'Gam"},
            "not json {",
            "",
            {"id": 3},
            {"id": 4, "response": "I don't know."},
        ],
    )
    out = tmp_path / "out.jsonl"
    args = ["llm", "parse", "--task", "timer4.answer", str(inp), "--output", str(out), "--json"]
    code, _, err = run_cli(args, capsys)
    assert code == 1
    got = rows(out)
    assert [r["id"] for r in got] == [1, "b", None, 3, 4]  # one line per (non-blank) input line
    assert got[0] == {"id": 1, "ok": True, "value": ["People's Republic of China", "Palau"], "reason": ""}
    assert got[1]["ok"] and got[1]["value"] == ["Alpha", "Beta"] and "cut off" in got[1]["reason"]
    assert not got[2]["ok"] and got[2]["reason"].startswith("bad input: line 3 is not JSON")
    assert not got[3]["ok"] and "missing field(s) response" in got[3]["reason"]
    assert not got[4]["ok"] and got[4]["reason"] == "the reply gives no answer"
    summary = json.loads(err.strip().splitlines()[-1])
    assert summary == {
        "task": "timer4.answer",
        "lines": 5,
        "ok": 2,
        "with_note": 1,
        "refused": 1,
        "bad_input": 2,
        "by_reason": {"declined": 1},  # the refusals only: bad input is counted once, as bad_input
    }


def test_the_summary_counts_bad_input_apart_from_the_refusals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path / "bad.jsonl", [{"id": 1, "response": "- a"}, "not json {", {"id": 3}])
    code, _, err = run_cli(["llm", "parse", "--task", "timer4.answer", str(bad)], capsys)
    assert code == 1 and err.strip().endswith("1 read (0 with a note), 0 refused, 2 bad input")
    both = write(tmp_path / "both.jsonl", ["not json {", {"id": 2, "response": "I don't know."}])
    code, _, err = run_cli(["llm", "parse", "--task", "timer4.answer", str(both)], capsys)
    assert code == 1 and err.strip().endswith("0 read (0 with a note), 1 refused (declined 1), 1 bad input")


def test_all_read_exits_zero_and_prints_a_readable_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp = write(tmp_path / "in.jsonl", [{"id": 1, "response": "- a\n- b"}])
    code, out, err = run_cli(["llm", "parse", "--task", "timer4.answer", str(inp)], capsys)
    assert code == 0 and json.loads(out) == {"id": 1, "ok": True, "value": ["a", "b"], "reason": ""}
    assert "1 line(s): 1 read" in err


@pytest.mark.parametrize(
    ("task", "record", "value"),
    [
        ("timer4.rewrite",
         {"original_question": "After Vietnam, who praised Juan Carlos I?",
          "response": "After 2006-02-22, who praised Juan Carlos I?"},
         "After 2006-02-22, who praised Juan Carlos I?"),
        ("ari.action",
         {"candidate_actions": ["$get_after({entities},{your specified time})$", "$get_last({entities})$"],
          "response": "Action: $get_after({entities}, 2014)$\nReason: after 2014"},
         "get_after({entities},2014)"),
        ("ari.action",
         {"candidate_actions": ["get_after({entities}, 2012)", "get_last({entities})"],
          "response": "Action: $get_last({entities})$"},
         "get_last({entities})"),
        ("lpkg.plan",
         {"response": 'Sub_Question_1 = "Who is A?"\nInfo_1 = Search(query=Sub_Question_1)\n'
                      "Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)\n"
                      "Final_Answer = Finish_The_Plan(Answer=Ans_1)"},
         'Sub_Question_1 = "Who is A?"\nInfo_1 = Search(query=Sub_Question_1)\n'
         "Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)\n"
         "Final_Answer = Finish_The_Plan(Answer=Ans_1)"),
        ("cik.paths", {"response": '[["award received", "winner", ""], ["award received"]]'},
         [["award received", "winner", ""], ["award received"]]),
        ("cik.answer", {"response": 'Since X1 … the answer is e3.\nFinal answer: ["e3"]'}, ["e3"]),
        ("r3.verdict", {"response": "Reasoning …\nAnswer: Yes"}, "true"),
        ("r3.axiom", {"response": "Rule: A city must be in a country to be its capital."},
         {"rule": "A city must be in a country to be its capital.",
          "premises": ["A city must be in a country to be its capital."], "conclusion": ""}),
    ],
)  # fmt: skip
def test_each_task_reads_with_its_methods_parser(
    task: str, record: dict[str, Any], value: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp = write(tmp_path / "in.jsonl", [{"id": "x", **record}])
    code, out, _ = run_cli(["llm", "parse", "--task", task, str(inp)], capsys)
    row = json.loads(out)
    assert code == 0 and row["ok"] and row["value"] == value, row


def test_refusals_carry_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [
        {"id": 1, "original_question": "what was the first book charles dickens wrote",
         "response": 'The first book Charles Dickens wrote was "The Pickwick Papers," published in 1836.'},
    ]  # fmt: skip
    path = write(tmp_path / "r.jsonl", lines)
    code, out, _ = run_cli(["llm", "parse", "--task", "timer4.rewrite", str(path)], capsys)
    row = json.loads(out)
    assert code == 1 and not row["ok"] and row["value"] is None
    assert row["reason"].startswith("not a rewrite: not_a_question")
    action = {"id": 2, "candidate_actions": ["get_after({entities}, 2012)", "get_after({entities}, 2016)"],
              "response": "Action: $get_after({entities}, 2014)$"}  # fmt: skip
    path = write(tmp_path / "a.jsonl", [action])
    code, out, _ = run_cli(["llm", "parse", "--task", "ari.action", str(path)], capsys)
    row = json.loads(out)
    assert code == 1 and not row["ok"] and "is not one of the offered actions" in row["reason"]
    bad = {"id": 3, "response": "x", "candidate_actions": "get_last"}
    path = write(tmp_path / "b.jsonl", [bad])
    code, out, _ = run_cli(["llm", "parse", "--task", "ari.action", str(path)], capsys)
    assert code == 1 and "field candidate_actions must be a list" in json.loads(out)["reason"]


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp = write(tmp_path / "in.jsonl", [{"id": 1, "response": "a"}])
    code, _, err = run_cli(["llm", "parse", "--task", "nope", str(inp)], capsys)
    assert code == 2 and "--task: unknown task 'nope'" in err and "timer4.answer" in err
    code, _, err = run_cli(
        ["llm", "parse", "--task", "timer4.answer", str(tmp_path / "missing.jsonl")], capsys
    )
    assert code == 2 and "does not exist" in err
    code, out, _ = run_cli(["llm", "parse", "--list"], capsys)
    assert code == 0 and "ari.action" in out and "candidate_actions" in out


def test_ari_authors_recording_is_read_step_by_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line of ARI's authors' recording (one question, its steps): one record per step, no bad input."""
    step = {"step": 0, "candidate_actions": ["$get_tail_entity(Ann,met,2001)$", "$answer(Bob)$"],
            "response": "$answer(Bob)$", "retrieval": ["Bob"]}  # fmt: skip
    other = {**step, "step": 1, "response": "Action: $get_after(ENTITY_LIST, SPECIFIED_TIME)$"}
    inp = write(tmp_path / "ari.jsonl", [{"qid": 7, "question": {"question": "q"}, "steps": [step, other]}])
    code, out, err = run_cli(["llm", "parse", "--task", "ari.action", str(inp)], capsys)
    found = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in found] == ["7#0", "7#1"] and found[0]["value"] == "answer(Bob)"
    assert not found[1]["ok"] and "not one of the offered actions" in found[1]["reason"]
    assert "2 line(s)" in err and "0 bad input" in err and code == 1
