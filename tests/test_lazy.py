"""tkgqa.lazy: a lazy package's public names are the imports of its ``if TYPE_CHECKING:`` block (what
``__getattr__`` imports on first use) and its ``__all__``, a literal list: the form mypy and pyright read for
re-exports under ``--no-implicit-reexport`` and ``py.typed`` (a computed ``__all__`` would hide every name
from a strictly typed user). The two lists must agree."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import tkgqa.methods
from tkgqa.lazy import type_checking_exports

METHODS_DIR = Path(tkgqa.methods.__file__).parent
LAZY_PACKAGES = sorted(
    f"tkgqa.methods.{p.parent.name}"
    for p in METHODS_DIR.glob("*/__init__.py")
    if "lazy_exports(" in p.read_text(encoding="utf-8")
)


def test_the_built_in_method_packages_are_lazy() -> None:
    assert {"tkgqa.methods.ari", "tkgqa.methods.r3", "tkgqa.methods.timer4"} <= set(LAZY_PACKAGES)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_all_is_a_literal_list_of_the_type_checking_names_and_each_resolves(name: str) -> None:
    package = importlib.import_module(name)
    table = type_checking_exports(str(package.__file__))
    tree = ast.parse(Path(str(package.__file__)).read_text(encoding="utf-8"))
    literal = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]
    ]
    assert len(literal) == 1 and isinstance(literal[0], ast.List), f"{name}: __all__ is not one literal list"
    assert sorted(ast.literal_eval(literal[0])) == sorted(table) == sorted(package.__all__)
    assert table, f"{name} exports nothing"
    for export, module in table.items():
        defining = importlib.import_module(module, name)
        assert getattr(package, export) is getattr(defining, export)
    with pytest.raises(AttributeError, match="no attribute 'not_exported'"):
        package.not_exported  # noqa: B018


def _write_package(root: Path, name: str, block: str) -> str:
    pkg = root / name
    pkg.mkdir()
    (pkg / "impl.py").write_text("def first():\n    return 1\n\n\nSECOND = 2\n", encoding="utf-8")
    (pkg / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from tkgqa.lazy import lazy_exports, type_checking_exports\n"
        f"if TYPE_CHECKING:\n{block}"
        "__getattr__ = lazy_exports(__name__, type_checking_exports(__file__), globals())\n",
        encoding="utf-8",
    )
    return str(pkg / "__init__.py")


def test_a_name_is_imported_on_first_use_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_package(tmp_path, "lazy_pkg_ok", "    from .impl import SECOND, first\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    package = importlib.import_module("lazy_pkg_ok")
    try:
        assert "lazy_pkg_ok.impl" not in sys.modules
        assert package.first() == 1
        assert "lazy_pkg_ok.impl" in sys.modules
        assert "SECOND" not in vars(package)
        assert package.SECOND == 2
        assert "first" in vars(package)  # kept: the next lookup is a plain attribute
    finally:
        for mod in ("lazy_pkg_ok", "lazy_pkg_ok.impl"):
            sys.modules.pop(mod, None)


def test_a_renamed_export_is_refused(tmp_path: Path) -> None:
    init = _write_package(tmp_path, "lazy_pkg_alias", "    from .impl import first as one\n")
    with pytest.raises(ValueError, match="not renamed"):
        type_checking_exports(init)
