"""``tkgqa reproduce PAPER``: a paper's tables beside ours (the library: :mod:`tkgqa.eval.reproduce`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from ..errors import ConfigError
from ..llm.openai_backend import apply_llm_settings
from . import app
from .eval_cmd import print_warning
from .flags import LLMRetriesFlag, LLMTimeoutFlag
from .terminal import TerminalConsole, echo, echo_json, plain

console = TerminalConsole()


@app.command("reproduce")
def reproduce_command(
    paper: str = typer.Argument(..., help="ari, timer4, cik, lpkg or r3."),
    table: str | None = typer.Option(None, "--table", help="Only this table (its id, e.g. T2)."),
    llm: str | None = typer.Option(
        None, "--llm", help="LLM spec for the LLM cells (openai:MODEL, llamacpp:smollm2, replay:FILE…)."
    ),
    limit: int | None = typer.Option(
        None, "--limit", help="Questions per run: a stratified sample (by type, seed 0); default all."
    ),
    data_root: Path | None = typer.Option(
        None,
        "--data-root",
        help="The data root (default: $TKGQA_DATA, else $TKGQA_HOME/data; `tkgqa data fetch NAME` fills it).",
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        help="Folder for reproduce.json, reproduce.md and the runs (default runs/reproduce-PAPER).",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Estimate LLM calls and prompt tokens per run without calling a model."
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar per run."),
    as_json: bool = typer.Option(False, "--json", help="Print reproduce.json instead of tables."),
    force: bool = typer.Option(
        False, "--force", help="Write into --output even when it holds files `tkgqa reproduce` did not write."
    ),
    all_cells: bool = typer.Option(
        False, "--all", help="List every n/a cell (default: one line per table; reproduce.md lists them all)."
    ),
    llm_timeout: LLMTimeoutFlag = None,
    llm_retries: LLMRetriesFlag = None,
) -> None:
    """Run every cell of PAPER's tables that can run here and print the published number beside ours, with
    n, a 95% CI, the model, the status it earned and the deviations in force: 'ran' (the paper's model
    family and setting, no error), 'ran-other-model', 'ran-fake-llm' (--llm fake: canned replies, not a
    model), 'failed', 'reference' (an offline method of ours), 'bound' (a true upper bound) or 'n/a' with the
    reason. A replay: recording fills only the cells it is a recording of."""
    from ..eval import reproduce as rp
    from ..markdown import PLAIN

    apply_llm_settings(llm_timeout, llm_retries)
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1; got {limit}")
    root = data_root if data_root is not None else rp.default_data_root()
    if dry_run:
        estimates = [e.to_dict() for e in rp.dry_run(paper, table=table, limit=limit, data_root=root)]
        if as_json:
            echo_json({"paper": paper, "estimates": estimates, "how": rp.ESTIMATE_METHOD})
        else:
            echo(rp.render_estimates(estimates, rp.ESTIMATE_METHOD.format(k=3), PLAIN))
        return
    out = output if output is not None else Path("runs") / f"reproduce-{paper.strip().lower()}"

    def announce(key: Any, i: int, total: int) -> None:
        if progress and not as_json:
            console.print(f"[dim]run {i}/{total}: {key.method} on {key.dataset}[/dim]", highlight=False)

    show = progress and not as_json
    result = rp.reproduce(
        paper, output=out, table=table, llm=llm, limit=limit, data_root=root, progress=show,
        on_run=announce, warn=print_warning, force=force,
    )  # fmt: skip
    data = result.to_dict()
    if as_json:
        echo_json(data)
        return
    print_tables(data, all_cells=all_cells)
    console.print(Text("reproduce.json, reproduce.md and the run folders in ", "dim") + plain(out))


def print_tables(data: dict[str, Any], *, all_cells: bool = False) -> None:
    """The tables of reproduce.md as plain text (its shape, the values unescaped: a Markdown escape would show
    as a backslash on a terminal), the n/a cells summarised per table unless ``all_cells``."""
    from ..eval.reproduce import render_markdown
    from ..markdown import PLAIN

    echo(render_markdown(data, all_cells=all_cells, flavour=PLAIN))
