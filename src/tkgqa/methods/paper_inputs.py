"""What a method is given in a paper-table row as the paper gave it — what ``tkgqa reproduce`` asks of it.

A method package declares these inputs in its :class:`~tkgqa.methods.package.MethodPackage`
(``paper_inputs={"ari": "tkgqa.methods.ari.paper_inputs:PAPER_INPUTS"}``: method name → ``"module:attr"`` of
a :class:`PaperInputs`), the same way a third-party package does;
:func:`tkgqa.methods.package.load_paper_inputs` imports the one of a method. ``tkgqa reproduce`` asks
``missing`` of every LLM cell of the method (a reason makes the cell n/a) and ``prepare`` before each of its
LLM runs (the options it returns are added to the method's options for the run). Both get an
:class:`InputsRequest`: paths and the row's parsed options, nothing of the evaluation layer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class InputsRequest:
    """One cell or run of a paper table: the row's method spec (``"ari:no_clustering=true"``) and its parsed
    options (``{"no_clustering": "true"}``; a positional value under ``""``), the dataset's name and folder,
    the data root; for ``prepare`` also the LLM spec of the run and the reproduce output folder (where inputs
    built for the run are kept)."""

    method: str
    options: Mapping[str, str]
    dataset: str
    dataset_dir: Path
    root: Path
    llm: str | None = None
    output: Path | None = None


@dataclass(frozen=True)
class PaperInputs:
    """``missing(request)``: why the cell cannot be given what the paper gave it (``None``: it can, or it
    needs nothing); ``prepare(request)``: the options to add to the method's options for the run (e.g.
    ``{"memory": path}``), raising a :class:`~tkgqa.errors.TKGQAError` whose message is the run's error."""

    missing: Callable[[InputsRequest], str | None]
    prepare: Callable[[InputsRequest], dict[str, object]]
