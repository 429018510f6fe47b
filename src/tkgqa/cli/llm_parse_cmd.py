"""``tkgqa llm parse --task TASK INPUT.jsonl --output OUT.jsonl``: check that tkgqa reads a model's replies.

Each input line is a JSON object with ``id``, ``response`` and what the task needs (``tkgqa llm parse --list``
shows the tasks, each declared by its method package: :func:`tkgqa.methods.package.parse_tasks`), or a line of
a recording in its own format that the task reads (ARI's authors' recording: one line per question, one record
per step). Each record gives one output line ``{"id", "ok", "value", "reason"}``; a line that is not JSON or
lacks a field is reported the same way with the reason. A summary goes to stderr (``--json``: one JSON
object: ``refused`` counts the replies the task's parser did not accept, by kind in ``by_reason``;
``bad_input`` the input lines that were not JSON or lacked a field). Exit status 0 when every line was
read, 1 when any was refused or bad.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import typer

from ..errors import ConfigError
from ..sanitize import clean_json
from ..userfiles import MAX_LINE_BYTES, atomic_output, bounded_lines, check_output, open_input, parse_json
from .llm_cmd import llm_app

if TYPE_CHECKING:
    from ..llm.parse_tasks import ParseTask


def _read_line(line: bytes | str | None, number: int) -> tuple[Any, str]:
    """One input line → its JSON value, or the reason it is bad input (never an exception)."""
    if line is None:
        return None, f"bad input: line {number} is over {MAX_LINE_BYTES:,} bytes"
    try:
        return parse_json(line), ""
    except ValueError as exc:
        return None, f"bad input: line {number} is {exc}"


def _tasks() -> dict[str, ParseTask]:
    from ..methods.package import parse_tasks

    return parse_tasks()


def _check_task(task_name: str, tasks: dict[str, ParseTask]) -> None:
    if task_name not in tasks:
        raise ConfigError(f"--task: unknown task {task_name!r}; use one of: {', '.join(sorted(tasks))}")


def parse_file(task_name: str, lines: Iterable[bytes | str | None], out: IO[str]) -> dict[str, Any]:
    """Run ``task_name`` over the JSONL ``lines`` (text or bytes; ``None`` for a line too long to read),
    writing one result per line to ``out``; the summary. A line that is not UTF-8, not JSON or nested too
    deep is a ``bad_input`` row, never an exception."""
    from ..llm.parse_tasks import BAD_INPUT, ParseOutcome, run_task

    tasks = _tasks()
    _check_task(task_name, tasks)
    task = tasks[task_name]
    categories: Counter[str] = Counter()
    total = 0
    for number, line in enumerate(lines, start=1):
        if line is not None and not line.strip():
            continue
        record, problem = _read_line(line, number)
        for item in [record] if problem else task.records(record):
            total += 1
            outcome = (
                ParseOutcome(False, reason=problem, category=BAD_INPUT) if problem else run_task(task, item)
            )
            categories[outcome.category] += 1
            record_id = item.get("id") if isinstance(item, dict) else None
            out.write(json.dumps(clean_json(outcome.row(record_id)), ensure_ascii=False) + "\n")
    ok = categories["ok"] + categories["note"]
    return {
        "task": task_name,
        "lines": total,
        "ok": ok,
        "with_note": categories["note"],
        "refused": total - ok - categories[BAD_INPUT],
        "bad_input": categories[BAD_INPUT],
        "by_reason": {k: v for k, v in sorted(categories.items()) if k not in ("ok", "note", BAD_INPUT)},
    }


def _print_summary(summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(summary, ensure_ascii=False), err=True)
        return
    reasons = ", ".join(f"{k} {v}" for k, v in summary["by_reason"].items())
    typer.echo(
        f"{summary['task']}: {summary['lines']} line(s): {summary['ok']} read ({summary['with_note']} with a "
        f"note), {summary['refused']} refused"
        + (f" ({reasons})" if reasons else "")
        + f", {summary['bad_input']} bad input",
        err=True,
    )


@llm_app.command("parse")
def parse_cmd(
    input_path: Path | None = typer.Argument(None, help="JSONL of {id, response, …} ('-': stdin)."),
    task: str = typer.Option("", "--task", help="What the replies are: timer4.answer, ari.action, …"),
    output: Path | None = typer.Option(None, "--output", "-o", help="Output JSONL (default: stdout)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary on stderr as one JSON object."),
    list_tasks: bool = typer.Option(False, "--list", help="List the tasks and the fields they need."),
) -> None:
    """Read model replies the way tkgqa's methods do: one {id, ok, value, reason} line per input line."""
    tasks = _tasks()
    if list_tasks:
        for name, spec in sorted(tasks.items()):
            fields = ", ".join(["id", "response", *spec.fields])
            typer.echo(f"{name:15} {spec.help} — fields: {fields}")
        return
    if not task:
        raise ConfigError("--task is required (tkgqa llm parse --list shows the tasks)")
    if input_path is None:
        raise ConfigError("give the input JSONL file (or '-' for stdin)")
    _check_task(task, tasks)  # every option checked before any file is opened or written
    target = check_output(output, inputs=[input_path]) if output is not None else None
    source = open_input(input_path, what="the input file", stream=True)
    try:
        lines = bounded_lines(source)
        if target is None:
            summary = parse_file(task, lines, sys.stdout)
        else:
            with atomic_output(target) as out:  # the old file stays until the new one is whole
                summary = parse_file(task, lines, out)
    finally:
        if source is not sys.stdin.buffer:
            source.close()
    _print_summary(summary, as_json)
    if summary["ok"] < summary["lines"]:
        raise typer.Exit(1)
