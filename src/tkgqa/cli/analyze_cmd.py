"""``tkgqa analyze``: offline analyses of the retrieval-based methods.

``tkgqa analyze coverage --dataset NAME --data-dir DIR [--kg PATH] [--questions PATH] --method {timer4,cik}
[--limit N] [--llm SPEC] [--embedder NAME] --output OUT`` writes ``OUT/coverage.json`` (and
``OUT/per_question.jsonl``):

* ``timer4`` — ``{"fks": {"5": …, "10": …, "15": …, "20": …}, "tks": {…}, "tks_rerank": {…}}``: the fraction
  of questions whose gold answer is among the first n facts of each retrieval stage (TimeR4 Figure 3), also
  per question type (``by_qtype``). The rewrite is the LLM's with ``--llm``, else offline through the KG
  (``-o rewrite=off|kg|llm|auto``); ``per_question.jsonl`` records each question's rewrite and the
  constraint the rerank used.
* ``cik`` — ``{"facts": {"retrieved", "truncated", "pruned"}, "tokens": {"uncompressed", "compressed"},
  "answer_coverage"}`` (means over questions; CIK-LLM Table 3 / Figure 5) plus details. Relation paths come
  from the LLM with ``--llm``, else from the deterministic lexical policy.

``--dataset demo`` uses the bundled demo KG and questions. Questions with per-question facts (TimeQuestions'
retrieved facts, ``--context retrieved``) are answered over a KG of those facts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..datasets.base import Question
from ..errors import ConfigError
from ..kg import KGStore, TemporalKG
from ..llm.tokens import Tokenizer
from ..query import context_kg
from . import app
from .terminal import TerminalConsole

console = TerminalConsole(stderr=True)
analyze_app = typer.Typer(
    help="Offline analyses: retrieval coverage, evidence size, compression.", no_args_is_help=True
)
app.add_typer(analyze_app, name="analyze")

METHODS = ("timer4", "cik")


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


def _obfuscated(qs: list[Question], store: KGStore | None) -> tuple[list[Question], KGStore | None]:
    """K′/Q′: question entities linked on the original KG first, then every label obfuscated."""
    from ..methods.cik.obfuscate import entity_label_words, obfuscate_kg, obfuscate_question
    from ..query.link import QuestionLinker

    if store is None:
        raise ConfigError("--obfuscate needs a shared KG (not per-question contexts)")
    linker = QuestionLinker()
    new_kg, mapping = obfuscate_kg(store)
    vocab = entity_label_words(store)
    linked = [q.model_copy(update={"entities": linker(q, store)}) for q in qs]
    return [obfuscate_question(q, vocab, mapping) for q in linked], new_kg


def _timer4(
    qs: list[Question], store: KGStore | None, llm: str | None, options: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from ..methods.timer4 import TimeR4Method
    from ..methods.timer4.coverage import question_coverage, summarize

    method = TimeR4Method(llm=llm, **options)
    rows = _run(
        _question_kgs(qs, store), len(qs), "timer4 coverage", lambda q, kg: question_coverage(method, q, kg)
    )
    return summarize(rows, method=method), [
        {
            "qid": r.qid,
            "qtype": r.qtype,
            "scope": r.scope,
            "candidates": r.n_candidates,
            "rewritten": r.rewritten,
            "rewrite": {k: v for k, v in r.rewrite.items() if k != "step"},
            "time_constraint": r.time_constraint,
            "covered": {s: {str(n): v for n, v in c.items()} for s, c in r.covered.items()},
        }
        for r in rows
    ]


def _tokenizer(name: str | None) -> Tokenizer | None:
    """``None``: the default counter; otherwise a local llama.cpp model's tokenizer (``smollm2``)."""
    if not name:
        return None
    from ..llm.llamacpp_backend import LlamaCppBackend

    return LlamaCppBackend(name).tokenize


def _cik(
    qs: list[Question], store: KGStore | None, llm: str | None, options: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from ..methods.cik import CIKMethod
    from ..methods.cik.analysis import question_stats, summarize

    tokenizer_name = options.pop("tokenizer", None)
    method = CIKMethod(llm=llm, **options)
    tokenizer = _tokenizer(tokenizer_name)

    def one(q: Question, kg: KGStore) -> Any:
        stages = method.evidence(q, kg, use_llm=llm is not None)
        return question_stats(method, q, kg, stages, tokenizer=tokenizer)

    rows = _run(_question_kgs(qs, store), len(qs), "cik evidence", one)
    summary = summarize(rows, method=method, token_counter=tokenizer_name)
    summary["path_selection"] = "llm" if llm else "lexical (deterministic, offline)"
    return summary, [{**asdict(r), "curve": {str(k): v for k, v in r.curve.items()}} for r in rows]


@analyze_app.command("coverage")
def coverage(
    dataset: str = typer.Option(
        ..., "--dataset", help="multitq, timequestions, cronquestions, jsonl or demo."
    ),
    data_dir: str | None = typer.Option(None, "--data-dir", help="The dataset folder (or question file)."),
    output: Path = typer.Option(..., "--output", help="Folder for coverage.json and per_question.jsonl."),
    method: str = typer.Option(..., "--method", help="timer4 or cik."),
    kg: str | None = typer.Option(None, "--kg", help="KG file overriding the dataset's."),
    questions: str | None = typer.Option(None, "--questions", help="Question file overriding the dataset's."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    llm: str | None = typer.Option(None, "--llm", help="LLM for TimeR4's rewrite / CIK's path selection."),
    embedder: str | None = typer.Option(
        None, "--embedder", help="TimeR4 embedder: minilm, model2vec, hashing."
    ),
    tks_embedder: str | None = typer.Option(None, "--tks-embedder", help="TimeR4 time-aware retriever."),
    scope: str | None = typer.Option(None, "--scope", help="TimeR4 retrieval scope: auto, entities, kg."),
    context: str | None = typer.Option(None, "--context", help="retrieved (per-question facts) or kg."),
    obfuscate: bool = typer.Option(False, "--obfuscate", help="Measure on K′ (entity labels obfuscated)."),
    tokenizer: str | None = typer.Option(
        None,
        "--tokenizer",
        help="CIK: count tokens with a local model's tokenizer (smollm2), not the default.",
    ),
    option: list[str] = typer.Option(
        [], "--option", "-o", help="Extra method setting KEY=VALUE (repeatable)."
    ),
) -> None:
    """Answer coverage of TimeR4's retrieval stages, or CIK-LLM's evidence sizes/tokens/coverage."""
    if method not in METHODS:
        raise ConfigError(f"--method must be one of {', '.join(METHODS)}, got {method!r}")
    options: dict[str, Any] = dict(kv.split("=", 1) for kv in option if "=" in kv)
    if tokenizer and method == "cik":
        options["tokenizer"] = tokenizer
    if method == "timer4":
        options.update(
            {k: v for k, v in (("embedder", embedder), ("tks_embedder", tks_embedder), ("scope", scope)) if v}
        )
    qs, store, kg_desc = load_inputs(dataset, data_dir, kg, questions, context, limit)
    if obfuscate:
        qs, store = _obfuscated(qs, store)
    runner = _timer4 if method == "timer4" else _cik
    summary, rows = runner(qs, store, llm, options)
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
    output.mkdir(parents=True, exist_ok=True)
    (output / "coverage.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    with (output / "per_question.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    _print_summary(method, summary)
    console.print(f"wrote {output / 'coverage.json'}")


def _print_summary(method: str, summary: dict[str, Any]) -> None:
    from rich.table import Table

    if method == "timer4":
        table = Table("stage", "@5", "@10", "@15", "@20", title="answer coverage")
        for stage in ("fks", "tks", "tks_rerank"):
            table.add_row(stage, *(f"{summary[stage][n]:.3f}" for n in ("5", "10", "15", "20")))
    else:
        table = Table("stage", "facts", "answer coverage", title="evidence")
        for stage in ("retrieved", "truncated", "pruned"):
            table.add_row(
                stage, f"{summary['facts'][stage]:.1f}", f"{summary['answer_coverage_by_stage'][stage]:.3f}"
            )
        tok = summary["tokens"]
        table.caption = f"tokens: {tok['uncompressed']:.0f} plain → {tok['compressed']:.0f} compressed"
    console.print(table)
