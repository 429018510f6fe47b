"""``tkgqa analyze``: offline analyses of the methods.

``tkgqa analyze coverage --dataset NAME --data-dir DIR [--kg PATH] [--questions PATH] --method NAME
[--limit N] [--llm SPEC] [--embedder NAME] --output OUT`` runs the analysis that method's package declares
(``MethodPackage.analyses``, :class:`tkgqa.methods.analyses.Analysis`; what each one measures is in its
module) and writes ``OUT/coverage.json`` (its summary, plus ``meta``), ``OUT/per_question.jsonl`` (its
per-question rows) and its summary table. ``-o KEY=VALUE`` and the analysis options (``--embedder``,
``--tks-embedder``, ``--scope``, ``--tokenizer``) are passed to the analysis, each named option only to an
analysis that declares it.

``--dataset demo`` uses the bundled demo KG and questions. Questions with per-question facts (TimeQuestions'
retrieved facts, ``--context retrieved``) are answered over a KG of those facts. ``--obfuscate`` measures
``Q′`` over ``K′`` (:func:`tkgqa.eval.kg_view.obfuscated_alone`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..datasets.base import Question
from ..errors import ConfigError
from ..kg import KGStore, TemporalKG
from ..methods.analyses import SummaryTable
from ..query import context_kg
from ..userfiles import atomic_output, claim_folder, write_text
from . import app
from .terminal import TerminalConsole

console = TerminalConsole(stderr=True)
analyze_app = typer.Typer(
    help="Offline analyses: retrieval coverage, evidence size, compression.", no_args_is_help=True
)
app.add_typer(analyze_app, name="analyze")


def load_inputs(
    dataset: str,
    data_dir: str | None,
    kg: str | None,
    questions: str | None,
    context: str | None,
    limit: int | None,
) -> tuple[list[Question], KGStore | None, str]:
    """Questions, the shared KG (``None``: per-question contexts) and a description of the KG used."""
    from ..kg.loaders import load_demo_kg, load_kg

    if dataset == "demo":
        from ..datasets.demo import load_demo_questions

        qs = load_demo_questions()
        store: KGStore | None = load_kg(kg) if kg else load_demo_kg()
        return qs[:limit] if limit else qs, store, kg or "demo"
    from ..datasets.core import load_dataset

    options: dict[str, Any] = {}
    if kg:
        options["kg"] = kg
    if context:
        options["context"] = context
    ds = load_dataset(dataset, data_dir, questions=questions, **options)
    qs = ds.questions[:limit] if limit else ds.questions
    if ds.has_context and (context == "retrieved" or ds.kg_path is None):
        return qs, None, "per-question context"
    if ds.kg_path is None:
        raise ConfigError(f"dataset {dataset!r} has no KG file in {data_dir!r}; pass --kg PATH")
    return qs, load_kg(ds.kg_path), str(ds.kg_path)


def _question_kgs(qs: list[Question], store: KGStore | None) -> Iterator[tuple[Question, KGStore]]:
    for q in qs:
        if store is not None:
            yield q, store
        else:
            yield q, context_kg(q) if q.context is not None else TemporalKG(name=f"context:{q.qid}")


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def _run(
    items: Iterator[tuple[Question, KGStore]], n: int, label: str, fn: Callable[[Question, KGStore], Any]
) -> list[Any]:
    out = []
    with _progress() as bar:
        task = bar.add_task(label, total=n)
        for q, store in items:
            out.append(fn(q, store))
            bar.advance(task)
    return out


ANALYZE_COMMAND = "tkgqa analyze coverage"


@analyze_app.command("coverage")
def coverage(
    dataset: str = typer.Option(
        ..., "--dataset", help="multitq, timequestions, cronquestions, jsonl or demo."
    ),
    data_dir: str | None = typer.Option(None, "--data-dir", help="The dataset folder (or question file)."),
    output: Path = typer.Option(..., "--output", help="Folder for coverage.json and per_question.jsonl."),
    method: str = typer.Option(..., "--method", help="The method whose package declares the analysis."),
    kg: str | None = typer.Option(None, "--kg", help="KG file overriding the dataset's."),
    questions: str | None = typer.Option(None, "--questions", help="Question file overriding the dataset's."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    llm: str | None = typer.Option(None, "--llm", help="LLM the analysis uses (offline without)."),
    embedder: str | None = typer.Option(
        None, "--embedder", help="Analysis option: the retrieval embedder (minilm, model2vec, hashing)."
    ),
    tks_embedder: str | None = typer.Option(None, "--tks-embedder", help="Analysis: time-aware retriever."),
    scope: str | None = typer.Option(None, "--scope", help="Analysis: retrieval scope (auto, entities, kg)."),
    context: str | None = typer.Option(None, "--context", help="retrieved (per-question facts) or kg."),
    obfuscate: bool = typer.Option(False, "--obfuscate", help="Measure on K′ (entity labels obfuscated)."),
    tokenizer: str | None = typer.Option(
        None,
        "--tokenizer",
        help="Analysis option: count tokens with a local model's tokenizer (smollm2), not the default.",
    ),
    option: list[str] = typer.Option(
        [], "--option", "-o", help="Extra method setting KEY=VALUE (repeatable)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Write into --output even when it holds files this command did not write."
    ),
) -> None:
    """Run the offline analysis a method's package declares (retrieval coverage, evidence sizes, tokens)."""
    from ..methods.package import analysis_packages, load_analysis

    names = list(analysis_packages())
    if method not in names:
        raise ConfigError(f"--method must be one of {', '.join(names)}, got {method!r}")
    analysis = load_analysis(method)
    output = claim_folder(output, ANALYZE_COMMAND, force=force)  # before the work: nothing of yours is lost
    options: dict[str, Any] = dict(kv.split("=", 1) for kv in option if "=" in kv)
    # the analysis options, passed to an analysis that names them (``Analysis.options``)
    named = {"embedder": embedder, "tks_embedder": tks_embedder, "scope": scope, "tokenizer": tokenizer}
    options.update({k: named[k] for k in analysis.options if named.get(k)})
    qs, store, kg_desc = load_inputs(dataset, data_dir, kg, questions, context, limit)
    if obfuscate:
        from ..eval.kg_view import obfuscated_alone

        qs, store = obfuscated_alone(qs, store)

    def each(label: str, fn: Callable[[Question, KGStore], Any]) -> list[Any]:
        return _run(_question_kgs(qs, store), len(qs), label, fn)

    summary, rows = analysis.run(each, llm, options)
    summary = {
        **summary,
        "meta": {
            "dataset": dataset,
            "kg": kg_desc,
            "method": method,
            "llm": llm,
            "obfuscated": obfuscate,
            "questions": len(qs),
        },
    }
    write_text(output / "coverage.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    with atomic_output(output / "per_question.jsonl") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    _print_summary(analysis.table(summary))
    console.print(f"wrote {output / 'coverage.json'}")


def _print_summary(summary: SummaryTable) -> None:
    from rich.table import Table

    table = Table(*summary.columns, title=summary.title)
    for row in summary.rows:
        table.add_row(*row)
    table.caption = summary.caption
    console.print(table)
