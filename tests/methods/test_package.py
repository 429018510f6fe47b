"""Method packages register through one descriptor (:class:`tkgqa.methods.package.MethodPackage`), built-in
or third-party: methods as lazy references, a command group, parse tasks, analyses, paper inputs; a package's
namespace is lazy."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from test_registry import module_dir, run_python, write_distribution
from tkgqa.cli import _load_commands, app
from tkgqa.errors import ConfigError
from tkgqa.llm.parse_tasks import run_task
from tkgqa.methods import METHODS, Method, MethodPackage
from tkgqa.methods import package as pkg
from tkgqa.methods.analyses import Analysis
from tkgqa.methods.paper_inputs import PaperInputs
from tkgqa.registry import Registry

__all__ = ["module_dir"]  # the fixture, shared with test_registry

PLUGIN_MODULE = """
from tkgqa.llm.parse_tasks import ParseTask, as_is
from tkgqa.methods.analyses import Analysis, SummaryTable
from tkgqa.methods.base import Answer, Method
from tkgqa.methods.package import MethodPackage
from tkgqa.methods.paper_inputs import PaperInputs

class Echo(Method):
    name = "regtest_echo"
    def reason(self, question, kg):
        return Answer([question.text])

def _upper(response, record):
    return response.upper()

def _count(each, llm, options):
    rows = each("regtest count", lambda q, kg: {"qid": q.qid, "llm": llm})
    return {"questions": len(rows), "options": options}, rows

def _table(summary):
    return SummaryTable("count", ("questions",), ((str(summary["questions"]),),), "a caption")

TASKS = [ParseTask("regtest.upper", {}, _upper, as_is, "the reply in capitals")]
ANALYSIS = Analysis(_count, _table, options=("scope",))
def _prepare(request):
    if request.options.get("boom"):
        raise RuntimeError("disk on fire")
    return {"seen": [request.method, request.dataset_dir.name, request.llm]}

INPUTS = PaperInputs(
    missing=lambda request: None if request.options.get("k") else f"no k for {request.dataset}",
    prepare=_prepare,
)
PLUGIN = MethodPackage(
    name="regtest",
    methods={"regtest_echo": "tkgqa_regtest_pkg:Echo"},
    parse_tasks="tkgqa_regtest_pkg:TASKS",
    analyses={"regtest_echo": "tkgqa_regtest_pkg:ANALYSIS", "regtest_bad": "tkgqa_regtest_pkg:TASKS"},
    paper_inputs={"regtest_echo": "tkgqa_regtest_pkg:INPUTS", "regtest_bad": "tkgqa_regtest_pkg:TASKS"},
)
NOT_A_PACKAGE = {"methods": {}}
"""


@pytest.fixture
def fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin packages read again (the module caches them once per process)."""
    monkeypatch.setattr(pkg, "_PLUGINS", None)


def test_every_builtin_package_declares_its_methods_commands_and_tasks() -> None:
    declared = {d.package.name: d.package for d in pkg.builtin_packages()}
    assert set(declared) == {"symbolic", "ari", "baselines", "timer4", "cik", "hybrid", "lpkg", "r3"}
    assert all(d.distribution is None and d.origin == "built-in" for d in pkg.builtin_packages())
    for name, package in declared.items():
        for target in package.methods.values():  # each package names only its own modules
            assert target.startswith(f"tkgqa.methods.{name}.")
    assert {n for n, p in declared.items() if p.commands} == {"ari", "timer4", "lpkg"}
    assert list(pkg.analysis_packages()) == ["timer4", "cik"]
    assert all(isinstance(pkg.load_analysis(name), Analysis) for name in ("timer4", "cik"))
    assert list(pkg.paper_inputs_packages()) == ["ari", "lpkg"]
    assert all(isinstance(pkg.load_paper_inputs(name), PaperInputs) for name in ("ari", "lpkg"))
    assert pkg.load_paper_inputs("timer4") is None and pkg.load_paper_inputs("react_kb") is None
    assert sorted(pkg.parse_tasks()) == [
        "ari.action", "cik.answer", "cik.paths", "lpkg.plan", "r3.axiom", "r3.verdict",
        "timer4.answer", "timer4.rewrite",
    ]  # fmt: skip
    assert set(pkg.builtin_methods()) <= set(METHODS.names())


def test_a_descriptor_holds_references_only() -> None:
    with pytest.raises(ConfigError, match=r"'tkgqa.methods' is not a 'module:attr' reference"):
        MethodPackage(name="x", methods={"x": "tkgqa.methods"})
    with pytest.raises(ConfigError, match="parse tasks, paper, analyses or paper inputs"):
        MethodPackage(name="x", methods={})
    with pytest.raises(ConfigError, match=r"extras for undeclared method\(s\) \['y'\]"):
        MethodPackage(name="x", methods={"x": "m:X"}, extras={"y": "retrieval"})
    with pytest.raises(ConfigError, match=r"'m' is not a 'module:attr' reference"):
        MethodPackage(name="x", methods={}, analyses={"x": "m"})
    with pytest.raises(ConfigError, match=r"'m.X' is not a 'module:attr' reference"):
        MethodPackage(name="x", methods={"x": "m:X"}, paper_inputs={"x": "m.X"})
    package = MethodPackage(name="x", methods={"x": "m:X"})
    with pytest.raises(TypeError):
        package.methods["y"] = "m:Y"  # type: ignore[index]


@pytest.fixture
def regtest_package(module_dir: Path, fresh_plugins: None) -> None:
    """The distribution ``tkgqa-regtest-pkg`` installed, declaring :data:`PLUGIN_MODULE`'s ``PLUGIN``."""
    write_distribution(
        module_dir, "tkgqa-regtest-pkg", pkg.PACKAGE_GROUP, {"regtest": "tkgqa_regtest_pkg:PLUGIN"},
        module=PLUGIN_MODULE,
    )  # fmt: skip


def test_a_third_party_package_registers_like_a_builtin(regtest_package: None) -> None:
    reg: Registry[Method] = Registry("method", Method, plugin_sources=pkg.plugin_method_references)
    assert "regtest_echo" in reg.names()
    assert reg.origin("regtest_echo") == "plugin tkgqa-regtest-pkg"
    assert "tkgqa-regtest-pkg" in [d.distribution for d in pkg.plugin_packages()]
    tasks = pkg.parse_tasks()
    assert "regtest.upper" in tasks and "ari.action" in tasks
    outcome = run_task(tasks["regtest.upper"], {"id": 1, "response": "yes"})
    assert outcome.ok and outcome.value == "YES"


def test_a_third_party_package_registers_an_analysis(
    regtest_package: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    assert list(pkg.analysis_packages()) == ["timer4", "cik", "regtest_echo", "regtest_bad"]
    with pytest.raises(ConfigError, match=r"'tkgqa_regtest_pkg:TASKS' of plugin tkgqa-regtest-pkg is a list"):
        pkg.load_analysis("regtest_bad")
    with pytest.raises(ConfigError, match=r"unknown analysis 'nope'; use one of timer4, cik, regtest_echo"):
        pkg.load_analysis("nope")
    _load_commands()
    out = tmp_path / "out"
    args = ["analyze", "coverage", "--dataset", "demo", "--limit", "2", "--output", str(out)]
    result = CliRunner().invoke(app, [*args, "--method", "regtest_echo", "--scope", "kg", "--embedder", "x"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    summary = json.loads((out / "coverage.json").read_text())
    assert summary["questions"] == 2 and summary["options"] == {"scope": "kg"}  # only the options it names
    assert summary["meta"]["method"] == "regtest_echo"
    assert [json.loads(line)["llm"] for line in (out / "per_question.jsonl").open()] == [None, None]
    assert "a caption" in result.output
    result = CliRunner().invoke(app, [*args, "--method", "ari"])
    assert result.exit_code != 0
    assert "--method must be one of timer4, cik, regtest_echo, regtest_bad, got 'ari'" in str(
        result.exception
    )


def test_a_third_party_package_declares_paper_inputs(regtest_package: None, tmp_path: Path) -> None:
    from tkgqa.eval.reproduce.row_inputs import inputs_reason, prepare_inputs
    from tkgqa.eval.reproduce.spec import Column, PaperRow

    assert list(pkg.paper_inputs_packages()) == ["ari", "lpkg", "regtest_echo", "regtest_bad"]
    with pytest.raises(ConfigError, match=r"'tkgqa_regtest_pkg:TASKS' of plugin tkgqa-regtest-pkg is a list"):
        pkg.load_paper_inputs("regtest_bad")
    inputs = pkg.load_paper_inputs("regtest_echo")
    assert isinstance(inputs, PaperInputs)
    # tkgqa reproduce asks it by the row's method name, with the row's parsed options and the dataset's paths
    added = prepare_inputs("regtest_echo:k=1", "multitq", tmp_path, "fake", tmp_path / "out")
    assert added == {"seen": ["regtest_echo:k=1", "multitq", "fake"]}
    # a hook's own failure fails that run with a one-line error, never the whole reproduce
    with pytest.raises(
        ConfigError, match=r"the paper inputs of 'regtest_echo' failed: RuntimeError: disk on fire"
    ):
        prepare_inputs("regtest_echo:boom=1", "multitq", tmp_path, "fake", tmp_path / "out")
    column = Column(id="c", dataset="multitq")
    row = PaperRow(id="r", method="regtest_echo", llm=True)
    assert inputs_reason(row, column, tmp_path) == "no k for multitq"
    assert inputs_reason(row.model_copy(update={"method": "regtest_echo:k=1"}), column, tmp_path) is None


def test_a_broken_package_is_skipped_with_a_warning_naming_it(module_dir: Path, fresh_plugins: None) -> None:
    write_distribution(
        module_dir,
        "tkgqa-regtest-pkg",
        pkg.PACKAGE_GROUP,
        {"wrong": "tkgqa_regtest_pkg:NOT_A_PACKAGE", "gone": "tkgqa_regtest_nowhere:PLUGIN"},
        module=PLUGIN_MODULE,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert "tkgqa-regtest-pkg" not in [d.distribution for d in pkg.plugin_packages()]
    messages = [str(w.message) for w in caught]
    assert any("'tkgqa-regtest-pkg'" in m and "not a MethodPackage" in m for m in messages)
    assert any("'tkgqa-regtest-pkg'" in m and "ModuleNotFoundError" in m for m in messages)


def test_a_package_namespace_imports_its_modules_on_first_use() -> None:
    out = run_python(
        """
        import json, sys
        import tkgqa.methods.ari as ari
        before = "tkgqa.methods.ari.method" in sys.modules
        cls = ari.ARIMethod
        print(json.dumps({"before": before, "after": "tkgqa.methods.ari.method" in sys.modules,
                          "listed": "ARIMethod" in ari.__all__, "name": cls.__name__}))
        """
    )
    assert out == {"before": False, "after": True, "listed": True, "name": "ARIMethod"}
    import tkgqa.methods.ari as ari

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = ari.Nope  # type: ignore[attr-defined]
    assert sys.modules["tkgqa.methods.ari"] is ari
