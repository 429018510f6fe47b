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

from ..errors import ConfigError, TKGQAError
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
    "serve_cmd",
    "mcp_cmd",
    "embed_cmd",
    "reproduce_cmd",
    "data_cmd",
)
#: The command groups a method package added (``ari``, ``lpkg``…): each once.
_METHOD_GROUPS: set[str] = set()


def _load_commands() -> None:
    for name in _COMMAND_MODULES:
        try:
            importlib.import_module(f"tkgqa.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tkgqa.cli.{name}":
                raise
    _add_method_commands()


def _add_method_commands() -> None:
    """The command group each method package declares (its ``MethodPackage.commands``, a named
    ``typer.Typer``), built-in packages first. A plugin's group that fails to load, is not a named Typer or
    takes a command name already used is left out with a warning; a built-in one that fails raises."""
    from ..methods.package import load_declared, method_packages

    taken = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    for declared in method_packages():
        target = declared.package.commands
        if target is None:
            continue
        try:
            group = load_declared(declared, "commands", target)
            name = group.info.name if isinstance(group, typer.Typer) else None
            if not isinstance(name, str) or not name:
                raise ConfigError(f"{target!r} of {declared.origin} is not a typer.Typer with a name")
        except ConfigError as exc:
            if declared.distribution is None:
                raise
            warn_once(f"commands of {declared.origin} left out: {exc}")
            continue
        if name in _METHOD_GROUPS:
            continue
        if name in taken:
            if declared.distribution is None:
                raise ConfigError(f"built-in command group {name!r} of {declared.package.name!r} is taken")
            warn_once(f"commands of {declared.origin} left out: the command name {name!r} is already used")
            continue
        app.add_typer(group, name=name)
        _METHOD_GROUPS.add(name)
        taken.add(name)


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
