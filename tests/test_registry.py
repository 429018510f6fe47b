"""Registries: complete at import, built-ins imported lazily and never swallowed, plugins via entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tkgqa.errors import ConfigError
from tkgqa.methods import METHODS, Method
from tkgqa.methods.package import builtin_methods, register_builtin_methods
from tkgqa.registry import ENTRY_POINT_GROUPS, Registry

BUILTIN_METHOD_NAMES = {
    "symbolic", "ari", "llm_only", "kg_rag", "react_kb", "cot_kb", "timer4", "cik", "hybrid",
    "r3", "kaping", "cot0", "cot2", "lpkg",
}  # fmt: skip
BUILTIN_DATASET_NAMES = {
    "multitq", "timequestions", "cronquestions", "clqa", "jsonl", "demo",
    "crlt_qa", "crlt_claims", "recipe_mpr",
}  # fmt: skip
BUILTIN_KG_FORMATS = {"quadruples", "icews_ids", "wikidata", "timequestions", "tsv", "csv", "jsonl", "crlt"}
OPTIONAL = ("torch", "sentence_transformers", "faiss", "model2vec", "bm25s", "sklearn", "openai", "llama_cpp")


def run_python(code: str) -> Any:
    """Run ``code`` in a fresh interpreter; it prints one JSON value, returned parsed."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_registries_are_complete_in_a_fresh_interpreter() -> None:
    out = run_python(
        """
        import json, sys
        from tkgqa.methods import METHODS
        from tkgqa.datasets import DATASETS
        from tkgqa.kg.formats import format_names
        imported = sorted(m for m in sys.modules if m.startswith("tkgqa.methods."))
        print(json.dumps({"methods": METHODS.names(), "datasets": DATASETS.names(),
                          "formats": format_names(), "imported": imported}))
        """
    )
    assert set(out["methods"]) >= BUILTIN_METHOD_NAMES
    assert set(out["datasets"]) >= BUILTIN_DATASET_NAMES
    assert set(out["formats"]) >= BUILTIN_KG_FORMATS
    # listing imports no method implementation: the registry, the table of packages, and each package's
    # (lazy) namespace and descriptor
    shared = {
        "tkgqa.methods.base",
        "tkgqa.methods.options",
        "tkgqa.methods._builtin",
        "tkgqa.methods.package",
    }
    packages = {m for m in out["imported"] if m.count(".") == 2} - shared
    descriptors = {f"{p}.plugin" for p in packages}
    assert len(packages) >= 8 and set(out["imported"]) == shared | packages | descriptors


def test_every_builtin_imports_without_the_optional_dependencies() -> None:
    """The core install (no torch, no openai…) lists and imports every built-in method."""
    out = run_python(
        f"""
        import json, sys
        for name in {OPTIONAL!r}:
            sys.modules[name] = None  # import fails as if not installed
        from tkgqa.methods import METHODS, resolve_method
        from tkgqa.errors import ConfigError
        loaded = sorted(METHODS.load_all())
        try:
            resolve_method("ari:policy=symbolic,embedder=minilm")
            error = ""
        except ConfigError as exc:
            error = str(exc)
        print(json.dumps({{"loaded": loaded, "error": error}}))
        """
    )
    assert set(out["loaded"]) >= BUILTIN_METHOD_NAMES
    assert "tkgqa[retrieval]" in out["error"] and "minilm" in out["error"]


def test_builtin_table_matches_the_registered_names() -> None:
    assert set(builtin_methods()) == BUILTIN_METHOD_NAMES
    for name in BUILTIN_METHOD_NAMES:
        assert METHODS.origin(name) == "built-in"
        factory = METHODS.factory(name)
        assert isinstance(factory, type) and issubclass(factory, Method) and factory.name == name


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` for throwaway modules (removed from ``sys.modules`` afterwards)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("tkgqa_regtest_"):
            del sys.modules[name]


def test_a_typo_inside_a_builtin_module_raises(module_dir: Path) -> None:
    (module_dir / "tkgqa_regtest_typo.py").write_text("import tkgqa.methods.symbolc\nclass M: ...\n")
    reg: Registry[Any] = Registry("thing")
    reg.add_lazy("typo", "tkgqa_regtest_typo:M")
    assert "typo" in reg.names()  # listed
    with pytest.raises(ModuleNotFoundError, match=r"tkgqa\.methods\.symbolc"):
        reg.factory("typo")  # and the bug surfaces, it does not vanish


def test_a_missing_optional_dependency_names_the_extra(
    module_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (module_dir / "tkgqa_regtest_faiss.py").write_text("import faiss\nclass M: ...\n")
    monkeypatch.setitem(sys.modules, "faiss", None)
    reg: Registry[Any] = Registry("method")
    reg.add_lazy("vector", "tkgqa_regtest_faiss:M")
    assert "vector" in reg
    with pytest.raises(
        ConfigError, match=r"method 'vector' needs the optional dependency 'faiss'.*tkgqa\[retrieval\]"
    ):
        reg.resolve("vector")


def test_a_module_reference_that_registers_itself(module_dir: Path) -> None:
    (module_dir / "tkgqa_regtest_self.py").write_text(
        "from tkgqa_regtest_reg import REG\n@REG.register('selfreg')\nclass S:\n    pass\n"
    )
    reg: Registry[Any] = Registry("thing")
    sys.modules["tkgqa_regtest_reg"] = type(sys)("tkgqa_regtest_reg")
    sys.modules["tkgqa_regtest_reg"].REG = reg  # type: ignore[attr-defined]
    reg.add_lazy("selfreg", "tkgqa_regtest_self")
    reg.add_lazy("silent", "tkgqa_regtest_self")
    assert type(reg.resolve("selfreg")).__name__ == "S"
    with pytest.raises(ConfigError, match="did not register thing 'silent'"):
        reg.factory("silent")


def write_distribution(root: Path, dist: str, group: str, entries: dict[str, str], module: str = "") -> None:
    """A minimal installed distribution (``*.dist-info`` with entry points) under ``root``."""
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}\n")
    if module:
        (root / f"{dist.replace('-', '_')}.py").write_text(module)


def test_a_broken_plugin_names_its_distribution(module_dir: Path) -> None:
    write_distribution(
        module_dir,
        "tkgqa-regtest-broken",
        ENTRY_POINT_GROUPS["method"],
        {
            "broken_import": "tkgqa_regtest_broken:Missing",
            "not_a_method": "tkgqa_regtest_broken:NotAMethod",
            "boom": "tkgqa_regtest_nowhere:X",
        },
        module="class NotAMethod:\n    pass\n",
    )
    reg: Registry[Method] = Registry("method", Method)
    assert {"broken_import", "not_a_method", "boom"} <= set(reg.names())
    assert reg.origin("boom") == "plugin tkgqa-regtest-broken"
    with pytest.raises(ConfigError, match=r"plugin distribution 'tkgqa-regtest-broken'.*AttributeError"):
        reg.factory("broken_import")
    with pytest.raises(ConfigError, match=r"'tkgqa-regtest-broken'.*not a subclass of Method"):
        reg.factory("not_a_method")
    with pytest.raises(ConfigError, match=r"'tkgqa-regtest-broken'.*ModuleNotFoundError.*pip uninstall"):
        reg.factory("boom")


def test_a_plugin_cannot_shadow_a_builtin(module_dir: Path) -> None:
    write_distribution(
        module_dir, "tkgqa-regtest-shadow", ENTRY_POINT_GROUPS["method"], {"symbolic": "tkgqa_regtest_x:Y"}
    )
    reg: Registry[Method] = Registry("method", Method)
    register_builtin_methods(reg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert reg.origin("symbolic") == "built-in"
    assert any("tkgqa-regtest-shadow" in str(w.message) for w in caught)


def test_registry_without_group_reads_no_entry_points(module_dir: Path) -> None:
    write_distribution(module_dir, "tkgqa-regtest-other", "tkgqa.methods", {"other": "x:Y"})
    assert Registry("gadget").names() == []
    assert "other" in Registry("gadget", group="tkgqa.methods").names()


# --- issue #23 (item 9): plugins cannot replace built-ins, end the process or fail anonymously -----------
@pytest.fixture
def scratch_methods(module_dir: Path) -> Registry[Method]:
    """A method registry with the built-ins (as references) that plugin modules reach as
    ``tkgqa_regtest_reg.REG``."""
    reg: Registry[Method] = Registry("method", Method)
    register_builtin_methods(reg)
    sys.modules["tkgqa_regtest_reg"] = type(sys)("tkgqa_regtest_reg")
    sys.modules["tkgqa_regtest_reg"].REG = reg  # type: ignore[attr-defined]
    return reg


EVIL_METHOD = """
from tkgqa.methods import Method
from tkgqa_regtest_reg import REG

class Evil(Method):
    name = "evil"
    def reason(self, question, kg):
        raise AssertionError("the plugin's method ran")

REG.add({name!r}, Evil)
"""


def test_plugin_registering_a_builtin_name_is_refused_naming_it(
    module_dir: Path, scratch_methods: Registry[Method]
) -> None:
    write_distribution(
        module_dir,
        "tkgqa-regtest-evil",
        ENTRY_POINT_GROUPS["method"],
        {"evil": "tkgqa_regtest_evil"},
        module=EVIL_METHOD.format(name="Symbolic "),
    )
    scratch_methods.reload_plugins()
    with pytest.raises(ConfigError, match=r"tkgqa-regtest-evil.*'Symbolic ', which is built into tkgqa"):
        scratch_methods.factory("evil")
    assert scratch_methods.origin("symbolic") == "built-in"
    assert scratch_methods.factory("symbolic").__module__.startswith("tkgqa.methods")


def test_a_plugin_may_register_new_names_at_import(
    module_dir: Path, scratch_methods: Registry[Method]
) -> None:
    write_distribution(
        module_dir,
        "tkgqa-regtest-fine",
        ENTRY_POINT_GROUPS["method"],
        {"fine": "tkgqa_regtest_fine"},
        module=EVIL_METHOD.format(name="fine"),
    )
    scratch_methods.reload_plugins()
    assert scratch_methods.factory("fine").__name__ == "Evil"


@pytest.mark.parametrize(
    "body", ["import sys\nsys.exit(0)\n", "raise SystemExit(3)\n", "raise GeneratorExit\n"]
)
def test_a_plugin_exiting_at_import_is_an_error_naming_it(module_dir: Path, body: str) -> None:
    write_distribution(
        module_dir, "tkgqa-regtest-exit", ENTRY_POINT_GROUPS["method"], {"bye": "tkgqa_regtest_exit:M"}, body
    )
    reg: Registry[Method] = Registry("method", Method)
    with pytest.raises(ConfigError, match=r"plugin distribution 'tkgqa-regtest-exit'.*pip uninstall"):
        reg.factory("bye")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert "bye" not in reg.load_all(
            on_error="warn"
        )  # listing skips it with a warning, the process goes on
    assert any("tkgqa-regtest-exit" in str(w.message) for w in caught)


def test_ctrl_c_during_a_plugin_import_still_interrupts(module_dir: Path) -> None:
    write_distribution(
        module_dir,
        "tkgqa-regtest-ctrlc",
        ENTRY_POINT_GROUPS["method"],
        {"ctrlc": "tkgqa_regtest_ctrlc:M"},
        "raise KeyboardInterrupt\n",
    )
    with pytest.raises(KeyboardInterrupt):
        Registry("method", Method).factory("ctrlc")


def test_a_plugin_constructor_error_names_the_distribution(module_dir: Path) -> None:
    module = (
        "from tkgqa.errors import ConfigError\n"
        "class Boom:\n    def __init__(self, **kw):\n        raise ZeroDivisionError('inside the plugin')\n"
        "class Quits:\n    def __init__(self, **kw):\n        raise SystemExit(0)\n"
        "class Clear:\n    def __init__(self, **kw):\n        raise ConfigError('option x must be > 0')\n"
    )
    entries = {"boom": "tkgqa_regtest_ctor:Boom", "quits": "tkgqa_regtest_ctor:Quits"}
    entries["clear"] = "tkgqa_regtest_ctor:Clear"
    write_distribution(module_dir, "tkgqa-regtest-ctor", "tkgqa.gadgets", entries, module)
    reg: Registry[Any] = Registry("gadget", group="tkgqa.gadgets")
    named = r"gadget '\w+' from the plugin distribution 'tkgqa-regtest-ctor'.*failed to start"
    for name in ("boom", "quits"):
        with pytest.raises(ConfigError, match=named):
            reg.resolve(name)
    with pytest.raises(ConfigError, match="option x must be > 0"):  # a project error says it itself
        reg.resolve("clear")


def test_kg_info_survives_a_format_plugin_that_exits_at_import(tmp_path: Path) -> None:
    """The issue's case: ``sys.exit(0)`` in a KG-format plugin made ``tkgqa kg info`` exit 0 printing nothing
    (format plugins are imported by every auto-detection)."""
    write_distribution(
        tmp_path,
        "tkgqa-regtest-exitfmt",
        ENTRY_POINT_GROUPS["KG format"],
        {"exitfmt": "tkgqa_regtest_exitfmt:FORMAT"},
        "import sys\nsys.exit(0)\n",
    )
    kg = tmp_path / "tiny.txt"
    kg.write_text("Alice\tmet\tBob\t2015-01-01\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    env["TKGQA_HOME"] = str(tmp_path / "home")
    proc = subprocess.run(
        [sys.executable, "-m", "tkgqa", "kg", "info", str(kg), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["facts"] == 1
    assert "tkgqa-regtest-exitfmt" in proc.stderr and "sys.exit(0)" in proc.stderr
