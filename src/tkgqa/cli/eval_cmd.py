"""``tkgqa eval`` (run a method over a benchmark, write results + report) and ``tkgqa eval-compare``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ..errors import ConfigError
from . import app

console = Console()
DATASET_NAMES = ("multitq", "timequestions", "cronquestions", "clqa", "jsonl")
SAMPLES = ("stratified", "random", "first")
CONTEXTS = ("retrieved", "kg")


def _choice(value: str | None, allowed: tuple[str, ...], option: str) -> None:
    if value is not None and value not in allowed:
        raise ConfigError(f"{option} must be one of {', '.join(allowed)}; got {value!r}")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def print_summary(report: dict[str, Any], output: Path) -> None:
    """A rich table of the headline metrics and the first-level breakdowns."""
    m, s, u = report["metrics"], report["supported"], report["usage"]
    title = f"{report['method'].get('method', '?')} on {report['dataset'].get('name', '?')} (n={report['n']})"
    table = Table("metric", "value", title=title, title_justify="left")
    for key in ("strict_hits@1", "lenient_hits@1", "answered", "strict_hits@1_answered"):
        table.add_row(key, _pct(m[key]))
    for key, value in m.items():
        if key.startswith("strict_hits@") and key not in {"strict_hits@1", "strict_hits@1_answered"}:
            table.add_row(key, _pct(value))
    if report["dataset"].get("name") == "clqa":
        table.add_row("set_f1", _pct(m["set_f1"]))
        table.add_row("exact_set", _pct(m["exact_set"]))
    table.add_row("KG-supported", f"{s['n']}/{s['checked']} (Hits@1 {_pct(s['strict_hits@1'])})")
    a = report.get("supported_loose") or {}
    if a:
        table.add_row("KG-supported, loose", f"{a['n']}/{a['checked']} (Hits@1 {_pct(a['strict_hits@1'])})")
    table.add_row("LLM calls / question", f"{u['llm_calls_per_question']:.2f}")
    table.add_row(
        "tokens / question", f"{u['prompt_tokens_per_question'] + u['completion_tokens_per_question']:.0f}"
    )
    table.add_row("errors", str(report["errors"]))
    console.print(table)
    groups = Table("breakdown", "n", "strict Hits@1", "lenient Hits@1", title_justify="left")
    for dim, values in report["breakdown"].items():
        if dim == "overall":
            continue
        for value, g in values.items():
            groups.add_row(
                f"{dim}: {value}", str(g["n"]), _pct(g["strict_hits@1"]), _pct(g["lenient_hits@1"])
            )
    if groups.row_count:
        console.print(groups)
    console.print(f"[dim]results, report.json, report.md, breakdown.png in[/dim] {output}", highlight=False)


@app.command("eval")
def eval_command(
    dataset: str = typer.Option(
        ..., "--dataset", help="multitq, timequestions, cronquestions, clqa or jsonl."
    ),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="The dataset folder (as released)."),
    kg: str | None = typer.Option(None, "--kg", help="KG file (overrides the one found in --data-dir)."),
    questions: Path | None = typer.Option(
        None, "--questions", help="Question file (overrides --data-dir's)."
    ),
    method: str = typer.Option(..., "--method", help="Method name (symbolic, ari, timer4, cik, …)."),
    limit: int | None = typer.Option(None, "--limit", help="Evaluate this many questions."),
    sample: str | None = typer.Option(
        None, "--sample", help="How --limit chooses: stratified, random, first."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the random/stratified sample."),
    context: str | None = typer.Option(
        None, "--context", help="retrieved (per-question facts shipped with the data) or kg."
    ),
    llm: str | None = typer.Option(None, "--llm", help="LLM spec for LLM methods, e.g. openai:gpt-4o-mini."),
    policy: str | None = typer.Option(None, "--policy", help="ARI policy: llm, symbolic or oracle."),
    output: Path = typer.Option(..., "--output", help="Run folder (results.jsonl, report.*)."),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Skip questions already in the run."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    as_json: bool = typer.Option(False, "--json", help="Print report.json instead of tables."),
) -> None:
    """Evaluate a method on a benchmark: OUTPUT/results.jsonl, report.json, report.md, breakdown.png."""
    from ..datasets import load_dataset
    from ..eval.runner import evaluate
    from ..methods import resolve_method

    _choice(dataset, DATASET_NAMES, "--dataset")
    _choice(sample, SAMPLES, "--sample")
    _choice(context, CONTEXTS, "--context")
    if data_dir is None and questions is None:
        raise ConfigError("pass --data-dir (the dataset folder) or --questions (a question file)")
    options: dict[str, Any] = {}
    if context is not None:
        options["context"] = context
    kg_store: str | None = None
    if kg is not None:
        if Path(kg).expanduser().exists():
            options["kg"] = kg
        else:
            kg_store = kg  # e.g. "demo": resolved by load_kg
    ds = load_dataset(dataset, data_dir, questions, **options)
    method_opts = {k: v for k, v in (("llm", llm), ("policy", policy)) if v}
    runner = resolve_method(method, **method_opts)
    report = evaluate(
        runner, ds, kg_store, output, limit=limit, sample=sample, seed=seed, resume=resume, progress=progress
    )
    data = report.to_dict()
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False))
        return
    print_summary(data, output)


@app.command("eval-compare")
def eval_compare(
    run_a: Path = typer.Argument(..., help="First run folder (or its results.jsonl)."),
    run_b: Path = typer.Argument(..., help="Second run folder (or its results.jsonl)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Compare two runs on their common questions: strict Hits@1 and McNemar's test."""
    from ..eval.report import compare_runs

    result = compare_runs(run_a, run_b)
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False))
        return
    t = result["mcnemar"]
    table = Table("", "value", title=f"{run_a} vs {run_b} ({result['n_common']} common questions)")
    table.add_row("A strict Hits@1", _pct(result["a_strict_hits@1"]))
    table.add_row("B strict Hits@1", _pct(result["b_strict_hits@1"]))
    table.add_row("b (only A right)", str(t["b"]))
    table.add_row("c (only B right)", str(t["c"]))
    table.add_row(f"statistic ({t['method']})", f"{t['statistic']:.4g}")
    table.add_row("p-value", f"{t['p_value']:.4g}")
    console.print(table)
