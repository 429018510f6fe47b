"""``tkgqa eval`` (run a method over a benchmark, write results + report) and ``tkgqa eval-compare``."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import ConfigError
from ..eval.executor import ExecutorKind
from ..llm.openai_backend import apply_llm_settings
from ..userfiles import write_text
from . import app
from .flags import (
    ExecutorFlag,
    FallbackOptionFlag,
    LLMFlag,
    LLMRetriesFlag,
    LLMTimeoutFlag,
    MethodOptionFlag,
    PolicyFlag,
    RayAddressFlag,
    RayWorkersFlag,
)
from .terminal import TerminalConsole, warn_once

console = TerminalConsole()
err_console = TerminalConsole(stderr=True)
#: Exit status of ``tkgqa eval`` when the run finished but some questions failed with errors (2: the run
#: could not start, a ConfigError/DataError…).
EXIT_ERRORS = 1
SAMPLES = ("stratified", "random", "first")
CONTEXTS = ("retrieved", "kg")


def _choice(value: str | None, allowed: tuple[str, ...], option: str) -> None:
    if value is not None and value not in allowed:
        raise ConfigError(f"{option} must be one of {', '.join(allowed)}; got {value!r}")


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def print_summary(report: dict[str, Any], output: Path) -> None:
    """A rich table of the headline metrics and the first-level breakdowns."""
    from ..eval.report import METRICS_NOTE, latency_line, run_title

    m, s, u = report["metrics"], report["supported"], report["usage"]
    title = escape(run_title(report["method"], report["dataset"], report["n"], report.get("selection") or {}))
    table = Table("metric", "value", title=title, title_justify="left", caption=METRICS_NOTE)
    table.caption_justify = "left"
    for key in ("strict_hits@1", "lenient_hits@1", "answered", "strict_hits@1_answered"):
        table.add_row(key, _pct(m[key]))
    for key, value in m.items():
        if key.startswith("strict_hits@") and key not in {"strict_hits@1", "strict_hits@1_answered"}:
            table.add_row(key, _pct(value))
    if report["dataset"].get("name") == "clqa":  # LPKG scores CLQA-Wiki by set recall and precision
        table.add_row("set_recall", _pct(m["set_recall"]))
        table.add_row("set_precision", _pct(m["set_precision"]))
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
    replay = report.get("replay") or {}
    if replay:
        table.add_row(
            "replayed calls",
            f"{replay['exact']} exact, {replay['by_id']} by id, {replay.get('reask', 0)} re-asks, "
            f"{replay['miss']} miss",
        )
    if report.get("latency"):
        table.add_row("latency", latency_line(report["latency"]).removeprefix("Latency per question: "))
    n_errors = report["errors"]
    table.add_row("errors", f"[bold red]{n_errors}[/bold red]" if n_errors else "0")
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


def _run_flags(**flags: Any) -> dict[str, Any]:
    """The flags that were given, as RunConfig settings (paths as strings)."""
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in flags.items() if v is not None}


def write_run_config(output: Path, run_config: dict[str, Any]) -> dict[str, Any]:
    """Add ``run_config`` to the run's ``report.json``; return the updated report."""
    from ..eval.report import REPORT_JSON

    path = output / REPORT_JSON
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    data["run_config"] = run_config
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")  # whole, or the old file
    return data


@app.command("eval")
def eval_command(
    config: Path | None = typer.Option(
        None, "--config", help="Run file (.toml or .json) with any of the settings below; flags win."
    ),
    dataset: str | None = typer.Option(
        None, "--dataset", help="multitq, timequestions, cronquestions, clqa, jsonl, demo (or a plugin's)."
    ),
    data_dir: Path | None = typer.Option(
        None,
        "--data-dir",
        help="The dataset folder (as released; default: --dataset's folder in the data root, `tkgqa data`).",
    ),
    kg: str | None = typer.Option(None, "--kg", help="KG file (overrides the one found in --data-dir)."),
    questions: Path | None = typer.Option(
        None, "--questions", help="Question file (overrides --data-dir's)."
    ),
    method: str | None = typer.Option(None, "--method", help="Method name (symbolic, ari, timer4, cik, …)."),
    method_option: MethodOptionFlag = None,
    fallback_option: FallbackOptionFlag = None,
    limit: int | None = typer.Option(None, "--limit", help="Evaluate this many questions."),
    sample: str | None = typer.Option(
        None, "--sample", help="How --limit chooses its questions (needs --limit): stratified, random, first."
    ),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the random/stratified sample (0)."),
    context: str | None = typer.Option(
        None, "--context", help="retrieved (per-question facts shipped with the data) or kg."
    ),
    llm: LLMFlag = None,
    policy: PolicyFlag = None,
    output: Path | None = typer.Option(None, "--output", help="Run folder (results.jsonl, report.*)."),
    resume: bool | None = typer.Option(
        None, "--resume/--no-resume", help="Skip questions already in the run (default: resume)."
    ),
    retry_errors: bool | None = typer.Option(
        None,
        "--retry-errors/--no-retry-errors",
        help="On resume, answer the questions that failed with an error again (default: retry).",
    ),
    strict: bool | None = typer.Option(
        None,
        "--strict/--no-strict",
        help="Fail when an optional input that changes results is missing, or a data entry is malformed "
        "(default: warn, list it in report.json's warnings, and go on).",
    ),
    as_of: str | None = typer.Option(
        None,
        "--as-of",
        help="Answer over the KG as of this time (kg.as_of: facts starting before it, ends clipped), e.g. "
        "2000 for the CIK-LLM paper's K<2000; 'all' = K_all.",
    ),
    obfuscate: bool | None = typer.Option(
        None,
        "--obfuscate/--no-obfuscate",
        help="Ask the questions with obfuscated entity labels (Q′) over K_all ∪ K′ (CIK-LLM paper, Fig. 6).",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    record: Path | None = typer.Option(
        None,
        "--record",
        help="Also write the run's LLM calls as a cassette FILE.jsonl (replay it with --llm replay:FILE).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print report.json instead of tables."),
    force: bool = typer.Option(
        False,
        "--force",
        help="Write into --output (and --record) even when they hold files `tkgqa eval` did not write.",
    ),
    llm_timeout: LLMTimeoutFlag = None,
    llm_retries: LLMRetriesFlag = None,
    executor: ExecutorFlag = None,
    ray_address: RayAddressFlag = None,
    workers: RayWorkersFlag = None,
    llm_concurrency: int | None = typer.Option(
        None,
        "--llm-concurrency",
        help="Ray: LLM calls in flight over all workers at most (default: one per worker).",
    ),
) -> None:
    """Evaluate a method on a benchmark: OUTPUT/results.jsonl, report.json, report.md, breakdown.png.

    Method options: --method NAME --method-option KEY=VALUE … (or the short form --method "NAME:a=1,b=2");
    the whole run may come from --config run.toml, which the flags override.

    A question whose method failed (an LLM error: HTTP 500, timeout, bad key…) is an error row, not an
    abstention: the run goes on, the report counts the errors, the command says so on stderr and exits with
    status 1; running it again retries them. Missing optional inputs that change results are warnings on
    stderr and in report.json ("warnings"); --strict makes them errors."""
    from ..api.resolve import build_method
    from ..credentials import redact
    from ..datasets import DATASETS, load_dataset
    from ..eval.executor import ExecutorConfig
    from ..eval.record import check_cassette_target
    from ..eval.runner import evaluate
    from ..time import parse_as_of
    from .run_config import cli_method_options, effective_config, read_config_file

    apply_llm_settings(llm_timeout, llm_retries)
    _choice(sample, SAMPLES, "--sample")
    _choice(context, CONTEXTS, "--context")
    flags = _run_flags(
        dataset=dataset, data_dir=data_dir, kg=kg, questions=questions, method=method, limit=limit,
        sample=sample, seed=seed, context=context, llm=llm, policy=policy, output=output, resume=resume,
        retry_errors=retry_errors, strict=strict, as_of=as_of, obfuscate=obfuscate, executor=executor,
        ray_address=ray_address, workers=workers, llm_concurrency=llm_concurrency,
    )  # fmt: skip
    file_values = read_config_file(config) if config is not None else {}
    cfg = effective_config(file_values, flags, cli_method_options(method_option, fallback_option))
    run_on = ExecutorConfig.of(
        cfg.executor, address=cfg.ray_address, workers=cfg.workers, llm_concurrency=cfg.llm_concurrency
    )
    if cfg.dataset is not None and cfg.dataset not in DATASETS.names():
        raise ConfigError(f"--dataset: {DATASETS.unknown_message(cfg.dataset)}")
    if record is not None:  # checked before anything is loaded or written
        check_cassette_target(record, cfg.output, force=force, what="--record")
    options: dict[str, Any] = {}
    if cfg.context is not None:
        options["context"] = cfg.context
    kg_store: str | None = None
    if cfg.kg is not None:
        if Path(cfg.kg).expanduser().exists():
            options["kg"] = cfg.kg
        else:
            kg_store = cfg.kg  # e.g. "demo": resolved by load_kg
    parse_as_of(cfg.as_of, "--as-of")  # a bad time fails before anything is loaded (the runner applies it)
    ds = load_dataset(cfg.dataset, cfg.data_dir, cfg.questions, **options)
    runner = build_method(cfg.method, llm=cfg.llm, policy=cfg.policy, options=cfg.method_options)
    out = Path(cfg.output)
    for notice in ds.notices:
        err_console.print(f"[cyan]note:[/cyan] {escape(notice)}", highlight=False, soft_wrap=True)
    factory = functools.partial(
        build_method, cfg.method, llm=cfg.llm, policy=cfg.policy, options=cfg.method_options
    )  # what each Ray worker calls to build its own copy of the method
    evaluate(
        runner, ds, kg_store, out, limit=cfg.limit, sample=cfg.sample, seed=cfg.seed, resume=cfg.resume,
        progress=progress, retry_errors=cfg.retry_errors, strict=cfg.strict, warn=print_warning,
        executor=run_on, method_factory=factory, force=force, as_of=cfg.as_of, obfuscate=cfg.obfuscate,
    )  # fmt: skip
    settings = cfg.model_dump(mode="json")
    if run_on.kind is not ExecutorKind.LOCAL:  # how the run was executed (the rows do not depend on it)
        settings["executor"] = run_on.describe()
    data = write_run_config(out, redact(settings))
    if record is not None:
        record_cassette(out, record, force=force)
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False))
    else:
        print_summary(data, out)
    if data.get("errors"):
        print_failed(data, out)
        raise typer.Exit(EXIT_ERRORS)


def record_cassette(run: Path, target: Path, *, force: bool = False) -> None:
    """``--record``: the run's LLM calls as a cassette (:func:`tkgqa.eval.record.export_run`)."""
    from ..eval.record import export_run

    _, n = export_run(run, target, force=force)
    err_console.print(f"[dim]recorded {n} LLM calls in[/dim] {escape(str(target))}", highlight=False)


def print_warning(message: str) -> None:
    """A missing optional input (or what a KG skipped), on stderr, once per command."""
    warn_once(message)


def print_failed(report: dict[str, Any], output: Path) -> None:
    """The run's errors, loudly, on stderr (the command then exits with :data:`EXIT_ERRORS`)."""
    from ..eval.report import Report, problem_lines

    summary = problem_lines(Report.from_dict(report))[0]
    err_console.print(f"[bold red]error:[/bold red] {escape(summary)}", highlight=False, soft_wrap=True)
    err_console.print(
        f"[red]the error rows are in {escape(str(output))}/results.jsonl (field 'error'); "
        "--no-retry-errors keeps them on resume[/red]",
        highlight=False,
        soft_wrap=True,
    )


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
    title = f"{escape(str(run_a))} vs {escape(str(run_b))} ({result['n_common']} common questions)"
    table = Table("", "value", title=title)
    table.add_row("A strict Hits@1", _pct(result["a_strict_hits@1"]))
    table.add_row("B strict Hits@1", _pct(result["b_strict_hits@1"]))
    table.add_row("b (only A right)", str(t["b"]))
    table.add_row("c (only B right)", str(t["c"]))
    table.add_row(f"statistic ({t['method']})", f"{t['statistic']:.4g}")
    table.add_row("p-value", f"{t['p_value']:.4g}")
    console.print(table)
