"""``tkgqa`` command line: a thin layer over the library.

Each command group lives in its own module and registers itself on :data:`app`; errors derived from
:class:`tkgqa.errors.TKGQAError` are printed as one line and exit with status 2.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..errors import TKGQAError
from .terminal import SHOWN_WARNINGS, SlowWorkNotices, TerminalConsole, warn_once

app = typer.Typer(
    name="tkgqa",
    help="Question answering over temporal knowledge graphs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
err_console = TerminalConsole(stderr=True)
#: Slow work (model loads, distillations; local LLM calls once a command turns ``calls`` on) announced on
#: stderr with its estimate; installed by :func:`main`.
SLOW_WORK = SlowWorkNotices(err_console)


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"tkgqa {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print tkgqa's version and exit."
        ),
    ] = False,
) -> None:
    """Question answering over temporal knowledge graphs."""


# Command modules register their commands on ``app`` when imported.
_COMMAND_MODULES = (
    "kg_cmd",
    "ask_cmd",
    "eval_cmd",
    "llm_cmd",
    "llm_parse_cmd",
    "analyze_cmd",
    "ari_cmd",
    "timer4_cmd",
    "serve_cmd",
    "mcp_cmd",
    "lpkg_cmd",
    "embed_cmd",
    "reproduce_cmd",
    "data_cmd",
)


def _load_commands() -> None:
    for name in _COMMAND_MODULES:
        try:
            importlib.import_module(f"tkgqa.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tkgqa.cli.{name}":
                raise


def print_error(exc: BaseException) -> None:
    """One line on stderr; the message is printed literally (brackets in it are not rich markup)."""
    err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)


def _show_warning(message: Warning | str, category: type[Warning], *_args: Any, **_kwargs: Any) -> None:
    """Warnings on the terminal: one line each (no source path), each text once per command."""
    warn_once(str(message))


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``tkgqa`` script. Every KG a command loads says on stderr, once, what it
    skipped (:func:`tkgqa.kg.loaders.add_skip_listener`); slow work announces itself
    (:mod:`tkgqa.loading`)."""
    from ..kg.loaders import add_skip_listener
    from ..loading import add_listener

    warnings.showwarning = _show_warning
    SHOWN_WARNINGS.clear()
    add_skip_listener(warn_once)
    remove = add_listener(SLOW_WORK)
    _load_commands()
    try:
        app(args=argv, standalone_mode=True)
    except TKGQAError as exc:
        print_error(exc)
        sys.exit(2)
    finally:
        remove()
