"""The architecture contract, checked on the real import graph (the one `make lint`'s import-linter reads).
The contract is stated once, in pyproject.toml's ``[tool.importlinter]``: these tests read its layers and its
independent method packages from there, check that every method package — including packages added after
the contract was written — is listed, and that no layer reaches a layer above it."""

from __future__ import annotations

import pkgutil
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

import tkgqa.methods

grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter: run `make install-test`")

#: what every method may use inside tkgqa.methods
_SHARED = {"analyses", "base", "_builtin", "client", "options", "package", "paper_inputs"}


def _method_packages() -> list[str]:
    return sorted(
        f"tkgqa.methods.{m.name}"
        for m in pkgutil.iter_modules(tkgqa.methods.__path__)
        if m.name not in _SHARED
    )


def _pattern(expression: str) -> re.Pattern[str]:
    """An import-linter module expression (``*``: one segment, ``**``: one or more) as a regex."""
    parts = [
        r"[^.]+(?:\.[^.]+)*" if part == "**" else r"[^.]+" if part == "*" else re.escape(part)
        for part in expression.strip().split(".")
    ]
    return re.compile(r"\.".join(parts) + "$")


def _ignored(graph: Any, ignore_imports: list[str]) -> list[tuple[str, str]]:
    """The direct imports of ``graph`` that the contract's ``ignore_imports`` lines name."""
    out = []
    for line in ignore_imports:
        importer, imported = (_pattern(side) for side in line.partition("->")[::2])
        for module in graph.modules:
            if importer.match(module):
                found = graph.find_modules_directly_imported_by(module)
                out += [(module, m) for m in found if imported.match(m)]
    return out


@pytest.fixture(scope="module")
def graph() -> object:
    """The import graph without the imports the layers contract ignores (a method package's upper-layer
    pieces: its ``commands`` and LPKG's ``planning_jobs``)."""
    built = grimp.build_graph("tkgqa", exclude_type_checking_imports=True)
    ignored = _ignored(built, _contract("layers").get("ignore_imports", []))
    assert ignored, "the contract's ignore_imports match no import: drop or fix them"
    for importer, imported in ignored:
        built.remove_import(importer=importer, imported=imported)
    return built


def _contract(kind: str) -> dict[str, Any]:
    """The import-linter contract of type ``kind`` in pyproject.toml (the one statement of the layers)."""
    config = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    return next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == kind)


def _layers() -> list[list[str]]:
    """The layers, top first, each a list of its sibling packages (``a | b``)."""
    return [[m.strip() for m in layer.split("|")] for layer in _contract("layers")["layers"]]


def test_every_method_package_is_listed_in_the_import_linter_contract() -> None:
    assert set(_contract("independence")["modules"]) == set(_method_packages())


def test_methods_never_import_each_other(graph: object) -> None:
    packages = _method_packages()
    assert len(packages) >= 6
    offending = [
        (a, b)
        for a in packages
        for b in packages
        if a != b and graph.direct_import_exists(importer=a, imported=b, as_packages=True)  # type: ignore[attr-defined]
    ]
    assert offending == []


@pytest.mark.parametrize("lower", [m for layer in _layers()[1:] for m in layer])
def test_no_layer_reaches_a_layer_above_it(graph: object, lower: str) -> None:
    layers = _layers()
    at = next(i for i, layer in enumerate(layers) if lower in layer)
    siblings = [m for m in layers[at] if m != lower]  # "a | b": independent of each other
    above = [m for layer in layers[:at] for m in layer] + siblings
    chains = {
        upper: graph.find_shortest_chain(importer=lower, imported=upper, as_packages=True)  # type: ignore[attr-defined]
        for upper in above
    }
    assert {upper: chain for upper, chain in chains.items() if chain} == {}


def test_upper_layer_pieces_of_a_method_package_are_imported_by_nothing_below_the_cli(graph: Any) -> None:
    """A package's ``commands`` (and LPKG's ``planning_jobs``) may import upward only because no module
    below the CLI imports them: the CLI loads them from the package's descriptor."""
    forbidden = _contract("forbidden")
    assert "tkgqa.methods.*.commands" in forbidden["forbidden_modules"]
    pieces = [m for m in graph.modules if any(_pattern(e).match(m) for e in forbidden["forbidden_modules"])]
    assert {"tkgqa.methods.ari.commands", "tkgqa.methods.lpkg.planning_jobs"} <= set(pieces)
    allowed = {tuple(s.strip() for s in line.split("->")) for line in forbidden.get("ignore_imports", [])}
    importers = {
        (importer, piece)
        for piece in pieces
        for importer in graph.find_modules_that_directly_import(piece)
        if not importer.startswith("tkgqa.cli")
    }
    assert importers <= allowed


def test_no_import_cycles() -> None:
    pytest.importorskip("grimp", reason="needs grimp (the dev extra's import-linter)")
    from import_cycles import find_cycles

    assert find_cycles() == []


def test_only_tkgqa_serve_imports_the_service(graph: object) -> None:
    """The CLI shares what it needs with the service through the layers below (``tkgqa.api.resolve``);
    only ``tkgqa serve`` builds the app."""
    cli = graph.find_children("tkgqa.cli")  # type: ignore[attr-defined]
    importers = {
        module
        for module in cli
        if graph.direct_import_exists(importer=module, imported="tkgqa.service", as_packages=True)  # type: ignore[attr-defined]
    }
    assert importers <= {"tkgqa.cli.serve_cmd"}


@pytest.mark.parametrize(
    "module", ["tkgqa.usage", "tkgqa.errors", "tkgqa.sanitize", "tkgqa.credentials", "tkgqa.markdown"]
)
def test_root_modules_are_leaves(graph: object, module: str) -> None:
    """The root error types and :class:`~tkgqa.usage.Usage` import nothing from tkgqa at run time (the LLM
    layer and everything else depend on them, never the other way round)."""
    imported = graph.find_modules_directly_imported_by(module)  # type: ignore[attr-defined]
    assert {m for m in imported if m.startswith("tkgqa")} == set()
