"""Names a package exports without importing their modules until first use (PEP 562 ``__getattr__``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
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
