"""A third-party distribution (``tests/plugins/tkgqa_example_plugin``, installed by ``make install-test``)
adds a method, a KG format, an LLM backend and a dataset through entry points; tkgqa uses them by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.datasets import DATASETS, load_dataset
from tkgqa.kg.formats import KG_FORMATS, sniff_format
from tkgqa.kg.loaders import load_kg
from tkgqa.llm import LLM_BACKENDS, resolve_llm
from tkgqa.methods import METHODS, resolve_method

DIST = "tkgqa-example-plugin"
SOURCE = "tests/plugins/tkgqa_example_plugin"  # conftest.py: the tests skip without the distribution
ORIGIN = f"plugin {DIST}"


def test_plugins_are_listed_in_a_fresh_interpreter_without_being_imported() -> None:
    code = (
        "import json, sys\n"
        "from tkgqa.methods import METHODS\n"
        "from tkgqa.datasets import DATASETS\n"
        "from tkgqa.kg.formats import KG_FORMATS\n"
        "from tkgqa.llm.base import LLM_BACKENDS\n"
        "print(json.dumps([METHODS.names(), DATASETS.names(), KG_FORMATS.names(), LLM_BACKENDS.names(),\n"
        "                  'tkgqa_example_plugin' in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    methods, datasets, formats, backends, imported = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "echo_first_entity" in methods and "example_lines" in datasets
    assert "pipe" in formats and "echo" in backends
    assert imported is False


def test_plugin_method_from_tkgqa_eval(tmp_path: Path) -> None:
    assert METHODS.origin("echo_first_entity") == ORIGIN
    _load_commands()
    out = tmp_path / "run"
    args = ["eval", "--dataset", "demo", "--method", "echo_first_entity", "--limit", "3"]
    args += ["--method-option", "max_evidence=1", "--output", str(out), "--no-progress", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n"] == 3 and report["errors"] == 0
    assert report["method"] == {"method": "echo_first_entity", "config": {"max_evidence": 1}}
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text("utf-8").splitlines()]
    assert len(rows) == 3 and all(row["predictions"] for row in rows)


def test_plugin_method_from_python(demo_kg: object) -> None:
    from tkgqa.datasets import Question

    method = resolve_method("echo_first_entity")
    answer = method.answer(Question(qid="p1", text="Where did Barack Obama go?"), demo_kg)  # type: ignore[arg-type]
    assert answer.answers == ["Barack Obama"] and len(answer.evidence) == 3


def test_plugin_kg_format(tmp_path: Path) -> None:
    assert KG_FORMATS.origin("pipe") == ORIGIN
    by_suffix = tmp_path / "kg.pipe"
    by_suffix.write_text("# a pipe KG\nAnn|meet|Bob|2001\nBob|meet|Cy|2002|2004\n", "utf-8")
    assert sniff_format(by_suffix) == "pipe"
    kg = load_kg(by_suffix)
    assert len(kg) == 2 and kg.load_report is not None and kg.load_report.format == "pipe"
    by_content = tmp_path / "kg.txt"
    by_content.write_text("Ann|meet|Bob|2001\n", "utf-8")
    assert sniff_format(by_content) == "pipe"
    assert len(load_kg(by_content, format="pipe", cache=False)) == 1


def test_plugin_llm_backend() -> None:
    assert LLM_BACKENDS.origin("echo") == ORIGIN
    llm = resolve_llm("echo:parrot", cache=False, log=False)
    assert llm.chat("hello").text == "parrot: hello"


def test_plugin_dataset(tmp_path: Path) -> None:
    assert DATASETS.origin("example_lines") == ORIGIN
    questions = tmp_path / "qs.txt"
    questions.write_text("Who visited China in November 2014?\tBarack Obama\n", "utf-8")
    ds = load_dataset("example_lines", questions, kg="demo")
    assert ds.name == "example_lines" and [q.answers for q in ds] == [["Barack Obama"]]
