"""``tkgqa kg``: inspect, query and convert temporal KG files (``info``, ``query``, ``neighbors``,
``convert``, ``index``).

PATH is a KG file in any format :func:`tkgqa.kg.loaders.load_kg` reads, or ``demo`` for the bundled demo KG.
With ``--json`` every command prints one JSON value on stdout; facts are objects
``{"subject", "relation", "object", "start", "end"}`` with names spelled as in the source file and ISO times.
Entity and relation arguments accept KG names or labels (``Barack_Obama`` or ``barack obama``); an unknown one
fails with near-match suggestions (exit status 2).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import ConfigError, TKGQAError
from ..kg.fact import Fact
from ..kg.linking import EntityLinker
from ..kg.memory import TemporalKG
from ..kg.queries import QUERY_OPS, check_operator_args, kg_summary, run_operator
from . import app, print_error
from .terminal import TerminalConsole, echo_json, plain, warn_once

console = TerminalConsole()
kg_app = typer.Typer(
    name="kg", help="Inspect and query temporal KG files.", no_args_is_help=True, add_completion=False
)
app.add_typer(kg_app, name="kg")

PATH_HELP = (
    "KG file (quadruples, id files, Wikidata quintuples, TSV, CSV, JSONL), a .duckdb store, a Parquet "
    "directory, 'demo', or a dataset name (its KG in the data root: `tkgqa data`)."
)


@contextmanager
def cli_errors() -> Iterator[None]:
    """A TKGQAError becomes one line on stderr and exit status 2 (also when ``app`` is invoked directly)."""
    try:
        yield
    except TKGQAError as exc:
        print_error(exc)
        raise typer.Exit(2) from None


def open_named_kg(path: str, fmt: str = "auto", cache: bool = True, strict: bool = False) -> TemporalKG:
    """The KG ``path`` names (a file, ``demo`` or a fetched dataset's name, as ``--kg`` reads it:
    :func:`~tkgqa.api.resolve.open_kg`); malformed lines are skipped and counted (said on stderr) unless
    ``strict``."""
    from ..api.resolve import open_kg
    from ..kg.loaders import load_warnings

    kg = open_kg(path, format=fmt, strict=strict, cache=cache)
    for warning in load_warnings(kg):  # printed once (the CLI's loader listener may have said it)
        warn_once(warning)
    return kg


def resolve_entity(kg: TemporalKG, mention: str) -> str:
    """A KG entity name for ``mention`` (a name, or a label matching after normalisation)."""
    if kg.has_entity(mention):
        return mention
    return EntityLinker.from_kg(kg).resolve(mention, fuzzy_threshold=2.0)


def _emit_json(value: Any) -> None:
    echo_json(value)


def _fact_table(kg: TemporalKG, facts: list[Fact], title: str) -> Table:
    table = Table("subject", "relation", "object", "time", title=title, title_justify="left")
    for f in facts:
        table.add_row(
            plain(kg.label(f.subject)), plain(kg.label(f.relation)), plain(kg.label(f.object)), f.time_text()
        )
    return table


FormatOpt = typer.Option("auto", "--format", help="KG file format (auto-detected by default).")
NoCacheOpt = typer.Option(False, "--no-cache", help="Parse the file even if a cached copy exists.")
JsonOpt = typer.Option(False, "--json", help="Print JSON instead of tables.")


@kg_app.command("info")
def info(
    path: str = typer.Argument(..., help=PATH_HELP),
    as_json: bool = JsonOpt,
    top: int = typer.Option(10, "--top", min=1, help="How many of the most frequent relations to list."),
    fmt: str = FormatOpt,
    no_cache: bool = NoCacheOpt,
) -> None:
    """Counts, time span and most frequent relations of a KG."""
    with cli_errors():
        _info(path, as_json, top, fmt, no_cache)


def _info(path: str, as_json: bool, top: int, fmt: str, no_cache: bool) -> None:
    kg = open_named_kg(path, fmt, cache=not no_cache)
    summary = kg_summary(kg, path, top)
    counts = [(row["relation"], row["count"]) for row in summary["top_relations"]]
    if as_json:
        _emit_json(summary)
        return
    console.print(
        f"[bold]{escape(str(kg.name))}[/bold] ({summary['format'] or 'built-in'}): {len(kg):,} facts, "
        f"{len(kg.entities):,} entities, {len(kg.relations):,} relations, "
        f"{summary['start']} … {summary['end']}",
        highlight=False,
    )
    table = Table("relation", "facts", title="top relations", title_justify="left")
    for r, n in counts:
        table.add_row(plain(kg.label(r)), f"{n:,}")
    console.print(table)


@kg_app.command("query")
def query(
    path: str = typer.Argument(..., help=PATH_HELP),
    op: str = typer.Option(..., "--op", help="ARI operator: " + ", ".join(QUERY_OPS) + "."),
    head: str | None = typer.Option(None, "--head", help="Subject entity."),
    rel: str | None = typer.Option(None, "--rel", help="Relation."),
    tail: str | None = typer.Option(None, "--tail", help="Object entity."),
    time: str | None = typer.Option(None, "--time", help="Time (2015, 2015-03, 2015-03-21, 'Mar 2015')."),
    time2: str | None = typer.Option(None, "--time2", help="End of the window for get_between."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Print at most N facts."),
    as_json: bool = JsonOpt,
    fmt: str = FormatOpt,
    no_cache: bool = NoCacheOpt,
) -> None:
    """Run one ARI operator. Entity lookups use --head/--rel/--tail (and --time for get_tail_entity and
    get_head_entity); get_before/after/during/between/first/last filter the facts of that lookup."""
    with cli_errors():
        _query(path, op, head, rel, tail, time, time2, limit, as_json, fmt, no_cache)


def _query(
    path: str,
    op: str,
    head: str | None,
    rel: str | None,
    tail: str | None,
    time: str | None,
    time2: str | None,
    limit: int | None,
    as_json: bool,
    fmt: str,
    no_cache: bool,
) -> None:
    check_operator_args(op, head, rel, tail, time, time2, flag="--")
    kg = open_named_kg(path, fmt, cache=not no_cache)
    facts = run_operator(kg, None, op, head=head, rel=rel, tail=tail, time=time, time2=time2)
    shown = facts[:limit] if limit is not None else facts
    if as_json:
        _emit_json([f.to_dict() for f in shown])
        return
    more = f" (showing {len(shown)})" if len(shown) < len(facts) else ""
    console.print(_fact_table(kg, shown, f"{op}: {len(facts)} facts{more}"))


@kg_app.command("neighbors")
def neighbors_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    entity: str = typer.Argument(..., help="Entity name or label."),
    time: str | None = typer.Option(None, "--time", help="Only facts overlapping this time."),
    hops: int = typer.Option(2, "--hops", min=1, help="Report relations up to this many hops away."),
    limit: int = typer.Option(20, "--limit", min=1, help="How many facts and neighbours to print."),
    as_json: bool = JsonOpt,
    fmt: str = FormatOpt,
    no_cache: bool = NoCacheOpt,
) -> None:
    """The 1-hop neighbourhood of ENTITY: its facts, neighbours, lifetime and relations by hop."""
    with cli_errors():
        _neighbors(path, entity, time, hops, limit, as_json, fmt, no_cache)


def _neighbors(
    path: str, entity: str, time: str | None, hops: int, limit: int, as_json: bool, fmt: str, no_cache: bool
) -> None:
    from ..kg.neighborhood import entity_lifetime, neighbors, relations_by_hop, subgraph

    kg = open_named_kg(path, fmt, cache=not no_cache)
    name = resolve_entity(kg, entity)
    facts = subgraph(kg, name, time=time)
    near = neighbors(kg, name, time=time)
    life = entity_lifetime(kg, name)
    by_hop = relations_by_hop(kg, name, hops, time=time)
    if as_json:
        _emit_json(
            {
                "entity": name,
                "label": kg.label(name),
                "first": life.to_dict()["first"],
                "last": life.to_dict()["last"],
                "n_facts": len(facts),
                "neighbors": near[:limit],
                "n_neighbors": len(near),
                "relations_by_hop": {str(h): rels for h, rels in by_hop.items()},
                "facts": [f.to_dict() for f in facts[:limit]],
            }
        )
        return
    console.print(
        f"[bold]{escape(kg.label(name))}[/bold] ({escape(name)}): {len(facts):,} facts, "
        f"{len(near):,} neighbours, "
        f"{life.first} … {life.last}",
        highlight=False,
    )
    console.print(
        "neighbours: " + ", ".join(kg.label(e) for e in near[:limit]), highlight=False, markup=False
    )
    for h, rels in by_hop.items():
        if not rels:  # nothing new that far out (--hops beyond the KG's reach)
            continue
        console.print(
            f"relations at {h} hop(s): " + ", ".join(kg.label(r) for r in rels[:limit]),
            highlight=False,
            markup=False,
        )
    console.print(_fact_table(kg, facts[:limit], f"facts (first {min(limit, len(facts))} of {len(facts)})"))


class StoreFormat(StrEnum):
    """What ``tkgqa kg convert`` writes."""

    DUCKDB = "duckdb"
    PARQUET = "parquet"


@kg_app.command("convert")
def convert(
    src: str = typer.Argument(..., help=PATH_HELP),
    dst: str = typer.Argument(..., help="New .duckdb (or .ddb) file, or new directory with --to parquet."),
    to: StoreFormat | None = typer.Option(
        None, "--to", help="Output: duckdb (default; a persistent bi-temporal store) or parquet (a folder)."
    ),
    fmt: str = FormatOpt,
) -> None:
    """Convert a KG into a DuckDB store or a Parquet directory (tkgqa.kg.duckdb_store). A .duckdb source
    keeps its history (recorded/retracted times); another source is recorded now."""
    with cli_errors():
        _convert(src, dst, to, fmt)


def _convert(src: str, dst: str, to: StoreFormat | None, fmt: str) -> None:
    import shutil
    from pathlib import Path

    from ..kg.duckdb_io import export_parquet, import_parquet, new_store_file
    from ..kg.duckdb_store import DuckDBStore
    from ..kg.formats import directory_format, is_persistent_store, persistent_suffixes, sniff_format

    out = Path(dst).expanduser()
    target = to or (StoreFormat.PARQUET if out.suffix.lower() == ".parquet" else StoreFormat.DUCKDB)
    if target is StoreFormat.DUCKDB and not is_persistent_store(out):  # else nothing would open it as a store
        raise ConfigError(
            f"{str(out)!r}: a DuckDB store's name ends in {' or '.join(persistent_suffixes())}, which is how "
            f"--kg, tkgqa kg and tkgqa serve know it; e.g. {out.name}.duckdb (or --to parquet for a folder)"
        )
    if out.exists() and (target is StoreFormat.DUCKDB or not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{str(out)!r} already exists; convert into a new path")
    out.parent.mkdir(parents=True, exist_ok=True)  # `runs/kg.duckdb` in a fresh folder: the folder is made
    source = Path(src).expanduser()
    into = out if target is StoreFormat.DUCKDB else None  # a new file (built aside, renamed when complete)
    if src != "demo" and source.is_file() and (fmt == "duckdb" or sniff_format(source) == "duckdb"):
        if into is not None:  # a store to a store: the file as it is, history included
            DuckDBStore.open(source, read_only=True, snapshot=False).close()  # a tkgqa store, else DataError
            with new_store_file(into) as tmp:
                shutil.copyfile(source, tmp)
        store = DuckDBStore.open(into or source, read_only=True)
    elif src != "demo" and directory_format(fmt, source) is not None:
        store = import_parquet(source, into)
    else:
        kg = open_named_kg(src, fmt, strict=True)
        if into is not None:
            with new_store_file(into) as tmp:
                DuckDBStore.from_kg(kg, tmp).close()
            store = DuckDBStore.open(into, read_only=True)
        else:
            store = DuckDBStore.from_kg(kg)
    try:
        if target is StoreFormat.PARQUET:
            export_parquet(store, out)
        n = len(store)
    finally:
        store.close()
    console.print(f"wrote {n:,} live facts to {out} ({target.value})", highlight=False)


@kg_app.command("index")
def index(
    store_file: str = typer.Argument(..., help="A .duckdb store (tkgqa kg convert makes one)."),
) -> None:
    """Build the memory-mapped snapshot a DuckDB store reads through (STORE.duckdb.core/ beside it), so the
    next open answers at in-memory speed at once. Opening the store also builds it when missing or stale;
    run this after writing to the store from a process that had no snapshot, or to rebuild a damaged one.
    Needs the store's read-write lock (no server holding it)."""
    import time
    from pathlib import Path

    from ..kg.duckdb_core import snapshot_path
    from ..kg.duckdb_store import DuckDBStore

    with cli_errors():
        t0 = time.perf_counter()
        with DuckDBStore.open(Path(store_file), create=False, snapshot=False) as store:
            store.refresh_snapshot()
            n = len(store)
        took = time.perf_counter() - t0
        console.print(
            f"indexed {n:,} live facts in {took:.1f} s: {snapshot_path(Path(store_file))}", highlight=False
        )
