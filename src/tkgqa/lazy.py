"""Names a package exports without importing their modules until first use (PEP 562 ``__getattr__``)."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def lazy_exports(
    package: str, table: Mapping[str, str], namespace: dict[str, Any] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``table`` maps an exported name to the module that defines it
    (absolute, or relative to ``package`` when it starts with ``.``). With ``namespace`` (the package's
    ``globals()``) a name is imported once and kept there."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        if namespace is not None:
            namespace[name] = value
        return value

    return __getattr__


def type_checking_exports(module_file: str) -> dict[str, str]:
    """Name → module of the ``from … import …`` lines in the ``if TYPE_CHECKING:`` block of ``module_file``
    (a package's ``__file__``): the table of :func:`lazy_exports` written once, as the imports mypy reads.
    An ``import … as …`` alias there is an error (the exported name must be the defining module's). The
    package's ``__all__`` stays a literal list of the same names (``tests/test_lazy.py`` checks that they
    agree): it is what mypy and pyright read for re-exports of a ``py.typed`` package, and a computed one
    would hide every name from a strictly typed user."""
    tree = ast.parse(Path(module_file).read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if not isinstance(stmt, ast.ImportFrom):
                    continue
                for alias in stmt.names:
                    if alias.asname is not None:
                        raise ValueError(f"{module_file}: a lazy export is not renamed ({alias.name} as …)")
                    out[alias.name] = "." * stmt.level + (stmt.module or "")
    return out
