"""What the CLI prints goes through here: model replies, KG labels and error messages can hold ANSI escape
sequences and control characters, and none may reach the user's terminal
(:func:`tkgqa.sanitize.terminal_text`).

* :class:`TerminalConsole`: the rich console of every command; each string it renders (markup strings, table
  cells, titles) is made terminal-safe first, so a command cannot forget it;
* :func:`plain`: outside text as a rich ``Text`` (safe, and never read as rich markup: an entity called
  ``[link=…]x[/link]`` stays those characters);
* :func:`echo` / :func:`echo_json`: plain lines and ``--json`` output;
* :func:`warn_once`: a warning on stderr, each one once per command (Python warnings, what a loaded KG
  skipped — :func:`tkgqa.kg.loaders.add_skip_listener` — and ``tkgqa eval``'s missing inputs alike).
"""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..sanitize import terminal_json, terminal_text


class TerminalConsole(Console):
    """A rich ``Console`` that strips escape sequences and control characters from every string it renders.

    rich builds every string it prints (``print`` arguments, table cells, titles, captions) through
    :meth:`render_str`, so overriding it covers them; ``Text`` objects made elsewhere go through
    :func:`plain`."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal_text(text), **kwargs)


def plain(text: object) -> Text:
    """``text`` (outside data: a label, an answer, a model's words) as terminal-safe ``Text``, not markup."""
    return Text(terminal_text(str(text)))


#: The warnings this command printed (:func:`warn_once`), by their text without the ``--strict`` hint.
SHOWN_WARNINGS: set[str] = set()
#: What ``tkgqa eval`` adds to a skip warning (the same warning, printed once).
STRICT_HINT = " (--strict makes this an error)"


def warn_once(text: str) -> None:
    """``warning: TEXT`` on stderr, unless this command printed the same warning already."""
    key = text.removesuffix(STRICT_HINT)
    if key in SHOWN_WARNINGS:
        return
    SHOWN_WARNINGS.add(key)
    TerminalConsole(stderr=True).print(
        f"[yellow]warning:[/yellow] {escape(text)}", highlight=False, soft_wrap=True
    )


def echo(text: str, *, err: bool = False) -> None:
    """``typer.echo`` of terminal-safe ``text``."""
    typer.echo(terminal_text(text), err=err)


def echo_json(value: Any) -> None:
    """One line of JSON (``--json`` output) with no control character reaching the terminal."""
    typer.echo(terminal_json(value))


class SlowWorkNotices:
    """Says on the terminal when slow work starts (a model load or distillation, with its estimate) and how
    long it took (:func:`tkgqa.loading.add_listener`); one call to a local LLM too once :attr:`calls` is on
    (``tkgqa ask``, ``tkgqa ari build-memory``: commands without a progress bar of their own)."""

    def __init__(self, console: Console, *, calls: bool = False) -> None:
        self.console = console
        self.calls = calls

    def __call__(self, event: str, work: Any, seconds: float | None) -> None:
        if work.kind == "call" and not self.calls:
            return
        if event == "start":
            verb = "loading " if work.kind == "model" and not work.what.startswith("model2vec:") else ""
            estimate = f" ({work.estimate})" if work.estimate else ""
            self.console.print(Text(f"{verb}{work.what}…{estimate}", style="dim"))
        elif seconds is not None and seconds >= 1.0:
            self.console.print(Text(f"  {work.what}: {seconds:.1f} s", style="dim"))


class StageProgress:
    """``stage i/total`` lines with the time per item and the time left, for loops without a progress bar:
    every item when items are slow (the last line is 2 s old or more), else every 10th, and the last."""

    def __init__(self, console: Console) -> None:
        import time

        self.console = console
        self._stage = ""
        self._began = self._previous = self._last = time.monotonic()  # the loop starts now

    def __call__(self, stage: str, i: int, total: int) -> None:
        import time

        now = time.monotonic()
        if stage != self._stage:  # a stage starts where the one before it ended
            self._stage, self._began = stage, self._previous
        self._previous = now
        if i != total and i % 10 and now - self._last < 2.0:
            return
        self._last = now
        each = (now - self._began) / max(i, 1)
        left = each * (total - i)
        pace = f" ({each:.1f} s each, ~{_duration(left)} left)" if each >= 0.5 and i < total else ""
        self.console.print(Text(f"{stage} {i}/{total}{pace}", style="dim"))


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
