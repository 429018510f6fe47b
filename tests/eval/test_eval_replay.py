"""Record → replay: a TimeR4 run with FakeLLM exported as a cassette (``tkgqa.eval.record``) and replayed
through ``replay:`` gives the same rows; a missing reply is a ReplayMiss error row; the CLI's ``--record``
and ``tkgqa llm export``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import tkgqa.cli.eval_cmd
import tkgqa.cli.llm_cmd  # noqa: F401  (registers the commands)
from tkgqa.cli import app
from tkgqa.datasets.base import Question
from tkgqa.eval.record import export_run
from tkgqa.eval.report import read_results
from tkgqa.eval.runner import evaluate
from tkgqa.kg import Fact, TemporalKG
from tkgqa.llm import LLMRequest, resolve_llm
from tkgqa.methods.timer4 import TimeR4Method
from tkgqa.outcomes import ErrorKind, ResultRow
from tkgqa.testing import FakeLLM
from tkgqa.time import parse_time

FACTS = [
    ("Ann", "meet", "Bob", "2001"),
    ("Bob", "meet", "Cy", "2002"),
    ("Cy", "meet", "Dee", "2003"),
    ("Dee", "meet", "Ann", "2004"),
]


def kg() -> TemporalKG:
    return TemporalKG([Fact(s, r, o, parse_time(t), parse_time(t)) for s, r, o, t in FACTS], name="meet")


def questions() -> list[Question]:
    names = ["Ann", "Bob", "Cy", "Dee"]
    return [
        Question(qid=f"q{i}", text=f"Who did {n} meet after the war?", answers=[names[(i + 1) % 4]])
        for i, n in enumerate(names)
    ]


def responder(request: LLMRequest) -> str:
    text = request.messages[-1].content
    if text.startswith("Replace the temporal fact"):
        return text.rsplit("Question: ", 1)[-1].replace("after the war", "in 2002")
    for name in ("Ann", "Bob", "Cy", "Dee"):
        if f"Who did {name} meet" in text:
            return f"['{name}', 'x']"
    return "[]"


def timer4(llm: Any) -> TimeR4Method:
    return TimeR4Method(
        llm=llm, embedder="hashing", cache_embeddings=False, rewrite="llm", tks_embedder="fks"
    )


def comparable(rows: list[ResultRow]) -> list[str]:
    """The rows as JSON without latency and the replay counters (what a replay adds)."""
    out = []
    for result in rows:
        row = {k: v for k, v in result.to_json().items() if k != "latency_s"}
        row["usage"] = {k: v for k, v in row["usage"].items() if not k.startswith("replay_")}
        out.append(json.dumps(row, sort_keys=True, ensure_ascii=False))
    return out


def test_record_and_replay_give_identical_rows(tmp_path: Path) -> None:
    recorded = evaluate(
        timer4(resolve_llm(FakeLLM(responder))), questions(), kg(), tmp_path / "a", progress=False
    )
    assert recorded.errors == 0 and recorded.usage["llm_calls"] == 8 and recorded.replay == {}
    cassette = tmp_path / "run.cassette.jsonl"
    lines, n = export_run(tmp_path / "a", cassette)
    assert n == 8 and len(lines) == 9
    header = json.loads(lines[0])
    assert (
        header["backend"] == "fake" and header["model"] == "fake" and header["method"]["method"] == "timer4"
    )
    assert header["settings"]["temperature"] == 0.0 and header["tkgqa_version"]
    stages = [json.loads(x)["stage"] for x in lines[1:]]
    assert stages == ["rewrite", "answer"] * 4

    replayed = evaluate(
        timer4(resolve_llm(f"replay:{cassette}")), questions(), kg(), tmp_path / "b", progress=False
    )
    assert replayed.replay == {"exact": 8, "by_id": 0, "reask": 0, "miss": 0}
    assert comparable(read_results(tmp_path / "b")) == comparable(read_results(tmp_path / "a"))
    assert replayed.metrics == recorded.metrics


def test_replay_by_id_and_miss_is_an_error_row(tmp_path: Path) -> None:
    cassette = tmp_path / "by_id.jsonl"
    lines = [
        {"id": "q0", "stage": "rewrite", "response": "Who did Ann meet in 2002?"},
        {"id": "q0", "stage": "answer", "response": "['Bob']"},
        {"id": "q1", "response": "['Cy']"},  # no stage: answers both of q1's requests
    ]
    cassette.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    report = evaluate(
        timer4(resolve_llm(f"replay:{cassette}")), questions()[:3], kg(), tmp_path / "r", progress=False
    )
    rows = {r.qid: r for r in read_results(tmp_path / "r")}
    assert rows["q0"].predictions == ["Bob"] and rows["q1"].predictions == ["Cy"]
    miss = rows["q2"]
    assert miss.error_kind is ErrorKind.REPLAY_MISS and not miss.abstained and miss.predictions == []
    assert "no recorded reply" in str(miss.error) and "'q2'" in str(miss.error)
    assert report.replay == {"exact": 0, "by_id": 4, "reask": 0, "miss": 1}
    assert report.errors == 1 and report.errors_by_type == {"ReplayMiss": 1}


def test_cli_record_and_export(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    rows = [{"qid": f"q{i}", "question": f"Who won in {2000 + i}?", "answers": ["OK"]} for i in range(3)]
    (data / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    (data / "kg.tsv").write_text("Ann\tmeet\tBob\t2001\n", "utf-8")
    base = ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "llm_only", "--no-progress"]
    cassette = tmp_path / "rec.jsonl"
    first = CliRunner().invoke(
        app, [*base, "--llm", "fake", "--output", str(tmp_path / "a"), "--record", str(cassette)]
    )
    assert first.exit_code == 0, first.output
    assert len(cassette.read_text().splitlines()) == 4
    second = CliRunner().invoke(
        app, [*base, "--llm", f"replay:{cassette}", "--output", str(tmp_path / "b"), "--json"]
    )
    assert second.exit_code == 0, second.output
    assert json.loads(second.output)["replay"] == {"exact": 3, "by_id": 0, "reask": 0, "miss": 0}
    exported = CliRunner().invoke(app, ["llm", "export", str(tmp_path / "a")])
    assert exported.exit_code == 0, exported.output
    assert exported.output.splitlines()[1:] == cassette.read_text().splitlines()[1:]
    missing = CliRunner().invoke(app, ["llm", "export", str(tmp_path / "nowhere")])
    assert missing.exit_code != 0
