"""The example method package (``examples/method_plugin``, installed by ``make install-test``) is a method
a newcomer copies: registered only through its entry point, it gets presets, report metrics and service
options from tkgqa without any list inside tkgqa naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.datasets import Question, load_dataset
from tkgqa.eval import evaluate
from tkgqa.kg import TemporalKG
from tkgqa.methods import METHODS, resolve_method
from tkgqa.methods.package import builtin_methods

DIST = "tkgqa-method-example"
SOURCE = "examples/method_plugin"  # conftest.py: the tests skip without the distribution
NAME = "example_timeline"
OURS = "order=latest: the entity's latest fact answers (paper: the entity's earliest fact answers)"


def test_the_method_comes_from_its_entry_point_alone() -> None:
    assert METHODS.origin(NAME) == f"plugin {DIST}" and NAME not in builtin_methods()


def test_presets_come_from_the_shared_mechanism(demo_kg: TemporalKG) -> None:
    question = Question(qid="p1", text="Where did Barack Obama go?")
    paper, ours = resolve_method(NAME), resolve_method(f"{NAME}:preset=ours")
    assert paper.describe()["preset"] == "paper" and paper.describe()["deviations"] == []
    assert ours.describe()["preset"] == "ours" and ours.describe()["deviations"] == [OURS]
    assert paper.answer(question, demo_kg).answers == ["Columbia University"]  # educated at, 1981
    assert ours.answer(question, demo_kg).answers == ["Joe Biden"]  # praised, 2020
    back = resolve_method(f"{NAME}:preset=ours,order=earliest")  # a setting given wins over the preset
    assert back.describe()["deviations"] == []
    assert back.answer(question, demo_kg).answers == ["Columbia University"]


def test_deviations_and_report_metrics_reach_report_json(tmp_path: Path) -> None:
    report = evaluate(
        f"{NAME}:preset=ours", load_dataset("demo"), None, tmp_path / "lib", limit=4, progress=False
    )
    written = json.loads((tmp_path / "lib" / "report.json").read_text("utf-8"))
    assert written["method"]["deviations"] == [OURS] and written["method"]["config"]["order"] == "latest"
    metrics = written["method_metrics"]
    assert metrics == report.method_metrics and metrics["answered"] == 4
    assert metrics["evidence_per_answer"] == 3.0  # max_evidence's default

    _load_commands()
    out = tmp_path / "cli"
    args = ["eval", "--dataset", "demo", "--method", f"{NAME}:preset=ours", "--limit", "2"]
    args += ["--method-option", "max_evidence=1", "--output", str(out), "--no-progress", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    cli_report = json.loads(result.stdout)
    assert cli_report["method"]["deviations"] == [OURS]
    assert cli_report["method_metrics"] == {"answered": 2, "evidence_per_answer": 1.0}


def test_the_service_takes_exactly_the_marked_option() -> None:
    pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
    pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")
    from fastapi.testclient import TestClient

    from tkgqa.service import create_app

    ask = {"question": "Who visited China in November 2014?", "method": NAME}
    with TestClient(create_app()) as client:
        info = client.get("/api/methods").json()
        assert NAME in [m["name"] for m in info["methods"]]
        assert info["allowed"]["method_options"][NAME] == ["max_evidence"]
        res = client.post("/api/ask", json={**ask, "options": {"max_evidence": 1}})
        assert res.status_code == 200, res.text
        assert len(res.json()["evidence"]) == 1
        res = client.post("/api/ask", json={**ask, "options": {"min_label_chars": 2}})  # not marked
        assert res.status_code == 403 and res.json()["type"] == "NotAllowed"
        assert "allowed options: max_evidence" in res.json()["error"]
        res = client.post("/api/ask", json={**ask, "options": {"max_evidence": 51}})  # the field's le=50
        assert res.status_code == 400 and res.json()["type"] == "ConfigError", res.text


def test_its_descriptor_adds_a_command_group(capsys: pytest.CaptureFixture[str]) -> None:
    """The package's one descriptor (``plugin.py``, entry point ``tkgqa.method_packages``) also declares a
    command group: ``tkgqa example-timeline facts ENTITY`` lists the timeline the method reads."""
    from cli_run import run_cli
    from tkgqa.methods.package import plugin_packages

    declared = next(d for d in plugin_packages() if d.distribution == DIST)
    assert set(declared.package.methods) == {NAME} and declared.package.commands
    code, out, err = run_cli(["--help"], capsys)
    assert code == 0 and "example-timeline" in out, err
    code, out, err = run_cli(["example-timeline", "facts", "Barack Obama"], capsys)
    lines = out.splitlines()
    assert code == 0, err
    assert lines[0].endswith("educated at Columbia University (paper)")  # the paper preset's answer
    assert lines[-1].endswith("(ours)") and "Joe Biden" in lines[-1]  # the ours preset's answer
    code, out, err = run_cli(["example-timeline", "facts", "Nobody Known"], capsys)
    assert code == 2 and err.strip().startswith("error: no entity labelled 'Nobody Known'")
