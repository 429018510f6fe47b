"""The library's entry points at the top: ``tkgqa.ask``, ``tkgqa.load_kg``, ``tkgqa.evaluate`` (and
``tkgqa.load_dataset``), imported on first use so that ``import tkgqa`` stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


def test_ask_and_evaluate_take_as_of(tmp_path: Path) -> None:
    from tkgqa.errors import DataError

    assert tkgqa.ask(QUESTION, as_of="2014-06").answers == []  # the visit (2014-11) is not known yet
    assert (
        tkgqa.ask(QUESTION, as_of=2015).answers
        == tkgqa.ask(QUESTION, as_of="all").answers
        == ["Barack Obama"]
    )
    with pytest.raises(DataError, match="as_of 'someday' is not a time"):
        tkgqa.ask(QUESTION, as_of="someday")
    questions = tkgqa.load_dataset("demo").questions[:3]
    report = tkgqa.evaluate("symbolic", questions, "demo", tmp_path / "cut", progress=False, as_of="2000")
    written = (tmp_path / "cut" / "report.json").read_text(encoding="utf-8")
    view = report.to_dict()["kg_view"]
    assert view["setting"] == "K<2000" and view["facts"] < view["live_facts"] and '"kg_view"' in written
    assert report.metrics["answered"] == 0.0  # nothing the demo questions ask about happened before 2000
    plain = tkgqa.evaluate("symbolic", questions, "demo", tmp_path / "plain", progress=False)
    assert "kg_view" not in plain.to_dict()  # the KG as given: no view recorded


def test_as_of_is_read_by_one_rule() -> None:
    from tkgqa.errors import DataError
    from tkgqa.time import TimePoint, parse_as_of

    assert parse_as_of(None) is parse_as_of("") is parse_as_of(" ALL ") is None
    assert parse_as_of("2014-06") == TimePoint(2014, 6) and parse_as_of(2000) == TimePoint(2000)
    with pytest.raises(DataError, match="--as-of 'soon'"):
        parse_as_of("soon", "--as-of")


@given(st.text(max_size=40))
def test_as_of_never_raises_but_a_data_error(text: str) -> None:
    from tkgqa.errors import DataError
    from tkgqa.time import TimePoint, parse_as_of

    try:
        point = parse_as_of(text)
    except DataError as exc:
        assert "is not a time" in str(exc) or "year" in str(exc)
    else:
        assert point is None or isinstance(point, TimePoint)
