"""The library's entry points at the top: ``tkgqa.ask``, ``tkgqa.load_kg``, ``tkgqa.evaluate`` (and
``tkgqa.load_dataset``), imported on first use so that ``import tkgqa`` stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tkgqa
from tkgqa.errors import ConfigError

QUESTION = "Who visited China in November 2014?"

LIGHT = """
import sys
import tkgqa
heavy = ("pandas", "torch", "duckdb", "fastapi", "numpy", "tkgqa.eval", "tkgqa.kg", "tkgqa.methods")
print(",".join(m for m in heavy if m in sys.modules))
"""


def test_import_tkgqa_stays_light() -> None:
    out = subprocess.run([sys.executable, "-c", LIGHT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_entry_points_are_listed() -> None:
    assert {"ask", "evaluate", "load_kg", "load_dataset"} <= set(tkgqa.__all__) <= set(dir(tkgqa))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = tkgqa.nope  # type: ignore[attr-defined]


def test_load_kg_demo() -> None:
    kg = tkgqa.load_kg("demo")
    assert len(kg) > 0 and kg.has_entity("Barack Obama")


def test_ask_over_the_demo_kg() -> None:
    from tkgqa.methods.base import Answer, resolve_method

    answer = tkgqa.ask(QUESTION)
    assert isinstance(answer, Answer) and answer.answers and answer.evidence
    kg = tkgqa.load_kg("demo")
    same = resolve_method("symbolic").answer(tkgqa.load_dataset("demo").questions[0], kg)
    assert same.answers  # the demo's own question, answered the library's long way
    assert tkgqa.ask(QUESTION, kg=kg, method="symbolic").answers == answer.answers
    assert tkgqa.ask(QUESTION, kg=kg, method=resolve_method("symbolic")).answers == answer.answers


def test_ask_refuses_what_it_cannot_use() -> None:
    with pytest.raises(ConfigError, match="empty"):
        tkgqa.ask("  ")
    with pytest.raises(ConfigError):
        tkgqa.ask(QUESTION, method="symbolic", no_such_option=1)
    from tkgqa.methods.base import resolve_method

    with pytest.raises(ConfigError, match="built Method"):
        tkgqa.ask(QUESTION, method=resolve_method("symbolic"), relax=False)


def test_evaluate_writes_a_run(tmp_path: Path) -> None:
    questions = tkgqa.load_dataset("demo").questions[:5]
    report = tkgqa.evaluate("symbolic", questions, "demo", tmp_path / "run", progress=False)
    assert (tmp_path / "run" / "results.jsonl").is_file()
    assert report.to_dict()["n"] == 5
