"""``tkgqa data``: the benchmarks and recordings tkgqa reads — ``list``, ``fetch``, ``verify``, ``import``,
``path``.

Everything lives under the data root (``$TKGQA_DATA``, else ``$TKGQA_HOME/data``), one folder per catalogue
entry (``multitq/``, ``timequestions/``, ``llm_recordings/r3_authors_prompts/``…), where ``--dataset NAME``,
``--llm replay:NAME`` and the paper presets find them. ``fetch`` downloads the authors' files pinned to a
commit and checks each one's git blob id before it is moved into place (exit status 2 on a mismatch, with
nothing left behind); ``--mirror BASE`` (or ``$TKGQA_DATA_MIRROR``) reads them from
``BASE/OWNER/REPO/COMMIT/PATH`` instead of GitHub. ``import`` places files downloaded by hand (a drive-only
release such as CronQuestions' ``data.zip``). See docs/data.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table

from ..datasets.sources import (
    Entry,
    FetchOutcome,
    TransferSettings,
    catalogue,
    fetch_entry,
    import_path,
    presence,
    verify_entry,
)
from ..errors import ConfigError
from ..home import DATA_ENV, LEGACY_DATA_ENV, data_root
from . import app, err_console
from .kg_cmd import cli_errors
from .terminal import TerminalConsole, echo, echo_json, plain

console = TerminalConsole()
data_app = typer.Typer(
    name="data",
    help="Fetch, verify and find the benchmarks and recordings (under $TKGQA_DATA, else $TKGQA_HOME/data).",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(data_app, name="data")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def size_text(entry: Entry) -> str:
    """The recorded size, and whether large files of unrecorded size come on top."""
    unknown = sum(f.pin.size is None for f in entry.files)
    known = _mb(entry.known_size) if entry.known_size else ""
    if not unknown:
        return known or "0"
    more = f"{unknown} large file{'s' if unknown > 1 else ''}"
    return f"{known} + {more}" if known else more


def entry_json(entry: Entry, root: Path) -> dict[str, Any]:
    return {
        "name": entry.name,
        "kind": entry.kind,
        "title": entry.title,
        "holds": entry.holds,
        "paper": entry.paper,
        "licence": entry.licence,
        "datasets": list(entry.datasets),
        "folder": str(entry.folder_in(root)),
        "present": presence(entry, root),
        "size_bytes_known": entry.known_size,
        "sizes_complete": entry.sizes_complete,
        "files": [
            {"dest": f.dest, "source": f.pin.source, "git_blob": f.pin.blob, "size": f.pin.size}
            for f in entry.files
        ],
        "conversions": [
            {"name": c.name, "inputs": list(c.inputs), "outputs": list(c.outputs)} for c in entry.convert
        ],
        "manual": None
        if entry.manual is None
        else {
            "url": entry.manual.url,
            "what": entry.manual.what,
            "files": list(entry.manual.files),
            "verifiable": entry.manual.verifiable,
        },
        "replay": entry.replay,
        "notes": list(entry.notes),
    }


def checked_root() -> Path:
    """The data root, said when it cannot hold data: a file is a ConfigError; a folder that does not exist
    while ``$TKGQA_DATA`` names it (a typo?) is a note on stderr (``fetch`` creates it)."""
    root = data_root()
    if root.exists() and not root.is_dir():
        raise ConfigError(f"the data root {str(root)!r} is a file, not a folder: set {DATA_ENV} to a folder")
    named = next((env for env in (DATA_ENV, LEGACY_DATA_ENV) if os.environ.get(env)), "")
    if named and not root.exists():
        echo(f"note: ${named} names {root}, which does not exist yet (nothing is found there)", err=True)
    return root


@data_app.command("list")
def list_cmd(
    as_json: bool = typer.Option(False, "--json", help="One JSON object: root and entries."),
) -> None:
    """Every dataset and recording: name, size, licence, source, present here or not, and where."""
    with cli_errors():
        root = checked_root()
        entries = catalogue().entries
        if as_json:
            echo_json({"data_root": str(root), "entries": [entry_json(e, root) for e in entries]})
            return
        table = Table(
            "name", "kind", "size", "licence", "source (GitHub)", "here", "folder", title=f"data root: {root}"
        )
        for e in entries:
            table.add_row(
                plain(e.name),
                plain(e.kind),
                plain(size_text(e)),
                plain(e.licence_short or e.licence),
                plain(", ".join(s.split("@")[0] for s in e.sources())),
                plain(presence(e, root)),
                plain(e.folder + "/"),
            )
        console.print(table)
        console.print(
            "A large file's size is not recorded; it is checked by its git blob id. Fetch: tkgqa data "
            "fetch NAME…; where: tkgqa data path NAME; licences, pins, papers: tkgqa data list --json, "
            "docs/data.md",
            highlight=False,
        )


class _Bars:
    """One rich progress bar per file: bytes, speed and time left."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, label: str, done: int, total: int | None) -> None:
        task = self.tasks.get(label)
        if task is None:
            task = self.tasks[label] = self.progress.add_task(label, total=total)
        self.progress.update(task, completed=done, total=total)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
    )


def _say_outcome(o: FetchOutcome) -> None:
    parts = []
    if o.downloaded:
        parts.append(f"{len(o.downloaded)} file(s) downloaded and verified")
    if o.kept:
        parts.append(f"{len(o.kept)} already present and verified")
    if o.converted:
        parts.append(f"{len(o.converted)} converted")
    echo(f"{o.entry.name}: {', '.join(parts) or 'nothing to do'} → {o.folder}")
    if o.missing_manual and o.entry.manual:
        m = o.entry.manual
        echo(
            f"{o.entry.name}: {', '.join(o.missing_manual)} are published only at {m.url} ({m.what}): "
            f"download it, then run `tkgqa data import {o.entry.name} PATH`",
            err=True,
        )


@data_app.command("fetch")
def fetch_cmd(
    names: list[str] = typer.Argument(..., help="Catalogue names (`tkgqa data list`)."),
    mirror: str | None = typer.Option(
        None,
        "--mirror",
        help="Base URL of a mirror laid out as BASE/OWNER/REPO/COMMIT/PATH ($TKGQA_DATA_MIRROR).",
    ),
    timeout: float = typer.Option(60.0, "--timeout", min=1.0, help="Seconds per connection and read."),
    retries: int = typer.Option(4, "--retries", min=0, help="Further attempts after a failure (back-off)."),
) -> None:
    """Download the authors' files of each NAME, check every file's git blob id and size, convert, and move
    them into place under the data root. Files already there that verify are not downloaded again."""
    with cli_errors():
        entries = [catalogue().get(n) for n in names]
        settings = TransferSettings(timeout=timeout, retries=retries)
        for entry in entries:
            err_console.print(
                f"[bold]{escape(entry.name)}[/bold]: {escape(entry.title)}\n"
                f"  licence: {escape(entry.licence)}",
                highlight=False,
                soft_wrap=True,
            )
            with _progress() as progress:
                outcome = fetch_entry(entry, base=mirror, settings=settings, progress=_Bars(progress))
            _say_outcome(outcome)


@data_app.command("verify")
def verify_cmd(
    name: str | None = typer.Argument(None, help="One catalogue name (default: every entry present here)."),
    as_json: bool = typer.Option(False, "--json", help="The checks as JSON."),
) -> None:
    """Check the files under the data root: pinned files against the authors' git blob ids, converted and
    imported files against the sha256 recorded in SOURCE.json. Exit status 2 on a mismatch, 1 when a named
    entry is missing files."""
    with cli_errors():
        root = checked_root()
        entries = [catalogue().get(name)] if name else [
            e for e in catalogue().entries if presence(e, root) != "absent"
        ]  # fmt: skip
        results = {e.name: verify_entry(e, root=root) for e in entries}
        if as_json:
            echo_json({n: [c.__dict__ for c in checks] for n, checks in results.items()})
        else:
            if not entries:
                echo(f"nothing under {root} yet: `tkgqa data fetch NAME` (`tkgqa data list` shows the names)")
            for n, checks in results.items():
                counts: dict[str, int] = {}
                for c in checks:
                    counts[c.status] = counts.get(c.status, 0) + 1
                    if c.status != "ok":
                        echo(f"{n}: {c.dest}: {c.status}{' — ' + c.detail if c.detail else ''}")
                echo(f"{n}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
        statuses = {c.status for checks in results.values() for c in checks}
        if "mismatch" in statuses:
            raise typer.Exit(2)
        if name and "missing" in statuses:
            echo(f"{name}: files are missing: run `tkgqa data fetch {catalogue().get(name).name}`", err=True)
            raise typer.Exit(1)


@data_app.command("import")
def import_cmd(
    name: str = typer.Argument(..., help="Catalogue name."),
    path: Path = typer.Argument(..., help="A file, folder or archive (.zip, .tar.gz…) you downloaded."),
) -> None:
    """Place files downloaded by hand: pinned files are recognised by their git blob id wherever they sit;
    a drive-only release (CronQuestions' data.zip) by its layout, recorded with its sha256."""
    with cli_errors():
        entry = catalogue().get(name)
        err_console.print(f"licence: {escape(entry.licence)}", highlight=False, soft_wrap=True)
        _say_outcome(import_path(entry, path))


@data_app.command("path")
def path_cmd(name: str = typer.Argument(..., help="Catalogue name or dataset loader name.")) -> None:
    """Print where NAME lives under the data root (exit status 1 when it is not there at all; a note on
    stderr naming the missing files when only part of it is)."""
    with cli_errors():
        entry = catalogue().get(name)
        folder = entry.folder_in()
        typer.echo(str(folder / entry.replay) if entry.replay else str(folder))
        missing = entry.missing()
        if presence(entry) == "absent":
            echo(f"{entry.name} is not there yet: run `tkgqa data fetch {entry.name}`", err=True)
            raise typer.Exit(1)
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            echo(f"{entry.name} is partly there (missing {shown}): `tkgqa data fetch {entry.name}`", err=True)
