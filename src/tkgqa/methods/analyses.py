"""Offline analyses of a method — what ``tkgqa analyze coverage --method NAME`` runs.

A method package declares its analyses in its :class:`~tkgqa.methods.package.MethodPackage`
(``analyses={"timer4": "tkgqa.methods.timer4.coverage:ANALYSIS"}``: method name → ``"module:attr"`` of an
:class:`Analysis`), the same way a third-party package does; :func:`tkgqa.methods.package.load_analysis`
imports the one asked for. The command line loads the questions and the KG, applies ``--obfuscate``, runs
the analysis over each question with its KG and writes what it returns (``coverage.json``, one
``per_question.jsonl`` row per question) and its summary table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..datasets.base import Question
    from ..kg import KGStore

#: ``each(label, fn)``: ``fn(question, kg)`` of every question with its KG, in order (the caller shows the
#: progress under ``label``).
Each = Callable[[str, Callable[["Question", "KGStore"], Any]], list[Any]]
#: ``run(each, llm, options)`` → the ``coverage.json`` body and the per-question rows.
Runner = Callable[[Each, "str | None", dict[str, Any]], tuple[dict[str, Any], list[dict[str, Any]]]]


@dataclass(frozen=True)
class SummaryTable:
    """The table shown after an analysis: a title, column headers, rows of cells, an optional caption."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str | None = None


@dataclass(frozen=True)
class Analysis:
    """One offline analysis of a method: ``run`` (see :data:`Runner`; ``options`` are the method's settings,
    ``KEY=VALUE`` strings from ``-o`` plus the named options below), ``table`` (its summary as a
    :class:`SummaryTable`) and ``options``: the names of the command line's analysis options
    (``embedder``, ``tks_embedder``, ``scope``, ``tokenizer``) it takes; the others are not passed."""

    run: Runner
    table: Callable[[Mapping[str, Any]], SummaryTable]
    options: tuple[str, ...] = ()
