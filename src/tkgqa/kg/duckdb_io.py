"""Parquet import/export of a :class:`~tkgqa.kg.duckdb_store.DuckDBStore`, and the ``duckdb`` / ``parquet``
KG formats (so ``--kg store.duckdb`` or ``--kg DIR/`` works wherever a KG path is accepted).

**Parquet layout** (a directory, written by ``tkgqa kg convert SRC DIR --to parquet``):

* ``facts.parquet`` — one row per recorded fact, history included, in insertion order: ``id``,
  ``subject``, ``relation``, ``object`` (names as in the source), ``start``/``end`` (ISO text of the
  point's granularity, NULL = open), ``t0``/``t1`` (first/last day ordinal, authoritative), ``g0``/``g1``
  (granularity 1 year, 2 month, 3 day, 0 open), ``recorded_at``/``retracted_at`` (UTC timestamps).
* ``labels.parquet`` — ``name``, ``label``.

An outside Parquet file with just ``subject, relation, object, start, end`` (ISO text) imports too.
Loading either format through :func:`tkgqa.kg.load_kg` gives an in-memory
:class:`~tkgqa.kg.TemporalKG` of the live facts (the fast path for evaluations); open the file with
:meth:`DuckDBStore.open` to query it on disk instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError, NotFoundError
from ..time import NEG_INF, POS_INF
from .duckdb_core import refresh, snapshot_path
from .duckdb_schema import load_state
from .duckdb_store import DuckDBStore
from .duckdb_write import next_tx
from .formats import KGFormat, register_format
from .validate import MAX_NAME_CHARS

if TYPE_CHECKING:
    from .memory import TemporalKG

FACTS_FILE, LABELS_FILE = "facts.parquet", "labels.parquet"
_EPOCH_ORDINAL = 719163  # day ordinal of 1970-01-01 (tkgqa.time.days_from_civil)


def _iso(day: str, gran: str) -> str:
    d = f"(DATE '1970-01-01' + ({day} - {_EPOCH_ORDINAL}))"
    return (
        f"CASE {gran} WHEN 0 THEN NULL WHEN 1 THEN strftime({d}, '%Y') "
        f"WHEN 2 THEN strftime({d}, '%Y-%m') ELSE strftime({d}, '%Y-%m-%d') END"
    )


def _sql_path(p: Path) -> str:
    return str(p).replace("'", "''")


def export_parquet(store: DuckDBStore, directory: str | Path) -> Path:
    """Write every row of ``store`` (retracted ones too) and its labels to ``directory`` (created)."""
    out = Path(directory)
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"{str(out)!r} is not empty; export into a new directory")
    out.mkdir(parents=True, exist_ok=True)
    cur = store._sh.con.cursor()
    try:
        cur.execute(
            f"""COPY (SELECT f.id, e1.name AS subject, rl.name AS relation, e2.name AS object,
                {_iso("t0", "g0")} AS "start", {_iso("t1", "g1")} AS "end", t0, t1, g0, g1,
                make_timestamp(recorded_at) AS recorded_at, make_timestamp(retracted_at) AS retracted_at
            FROM facts f JOIN entities e1 ON f.s = e1.id JOIN relations rl ON f.r = rl.id
                JOIN entities e2 ON f.o = e2.id ORDER BY f.id)
            TO '{_sql_path(out / FACTS_FILE)}' (FORMAT parquet, COMPRESSION zstd)"""
        )
        cur.execute(
            f"COPY (SELECT name, label FROM labels ORDER BY name) TO '{_sql_path(out / LABELS_FILE)}' "
            "(FORMAT parquet)"
        )
    finally:
        cur.close()
    return out


_NAME_COLS = ("subject", "relation", "object")
_EXPORT_COLS = ("t0", "t1", "g0", "g1")
_INT_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
)
_TIME_TYPES = ("VARCHAR", "DATE", *_INT_TYPES)
_TS_TYPES = ("TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS")


def _schema_error(facts_file: Path, message: str, fix: str) -> DataError:
    return DataError(f"{message}; {fix}", path=str(facts_file))


def _check_columns(types: Mapping[str, str], facts_file: Path) -> bool:
    """Check the column set and types of a Parquet facts file before anything is written; returns
    whether it is a tkgqa export (``t0 t1 g0 g1``) rather than an outside file (ISO ``start``/``end``)."""
    missing = [c for c in _NAME_COLS if c not in types]
    export = [c for c in _EXPORT_COLS if c in types]
    if not export and "start" not in types:
        missing.append("start")
    if missing:
        raise _schema_error(
            facts_file,
            f"missing column(s) {', '.join(missing)} (has {', '.join(sorted(types)) or 'none'})",
            "a facts file needs subject, relation, object and either start[, end] (ISO text such as 2015-03) "
            "or all of t0, t1, g0, g1 (a `tkgqa kg convert … --to parquet` export)",
        )
    if export and len(export) < len(_EXPORT_COLS):
        lacking = [c for c in _EXPORT_COLS if c not in types]
        raise _schema_error(
            facts_file,
            f"has column(s) {', '.join(export)} but not {', '.join(lacking)}",
            "give all of t0, t1, g0, g1, or none of them and ISO start/end text",
        )
    wanted: dict[str, tuple[str, ...]] = {c: ("VARCHAR",) for c in _NAME_COLS}
    wanted.update({c: _INT_TYPES for c in ("id", *export)})
    if not export:
        wanted.update({c: _TIME_TYPES for c in ("start", "end")})
    wanted.update({c: _TS_TYPES for c in ("recorded_at", "retracted_at")})
    for col, allowed in wanted.items():
        if col in types and types[col] not in allowed:
            raise _schema_error(
                facts_file,
                f"column {col!r} is {types[col]}, not {' or '.join(allowed[:3])}",
                f"write one {'name as text' if col in _NAME_COLS else 'value'} per row in {col!r} "
                "(not a list or a struct)",
            )
    return bool(export)


def _first_bad(cur: Any, cond: str, order: str) -> tuple[int, int] | None:
    """``(row number, how many rows)`` of the rows of ``p`` meeting ``cond`` (the first in file order)."""
    found = cur.execute(f"SELECT min({order}) + 1, count(*) FROM p WHERE {cond}").fetchone()
    return None if not found or not found[1] else (int(found[0]), int(found[1]))


def _check_rows(cur: Any, facts_file: Path, export: bool, has_id: bool) -> None:
    """The row checks of a Parquet facts file (in SQL, before anything is written): one DataError naming
    the column, the first bad row and how many rows share the problem."""
    bad = r"[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]"
    checks: list[tuple[str, str, str]] = []
    for c in _NAME_COLS:
        checks += [
            (
                f"{c} IS NULL OR trim({c}) = ''",
                f"an empty {c}",
                "every fact needs a subject, relation and object",
            ),
            (
                f"length({c}) > {MAX_NAME_CHARS}",
                f"a {c} over {MAX_NAME_CHARS:,} characters",
                "names are short",
            ),
            (f"regexp_matches({c}, '{bad}')", f"a {c} with a control or invisible character", "remove it"),
        ]
    if export:
        gran = "granularity 1 (year), 2 (month), 3 (day) or 0 (open)"
        for t, g, inf in (("t0", "g0", NEG_INF), ("t1", "g1", POS_INF)):
            checks += [
                (
                    f"{t} IS NULL OR {g} IS NULL",
                    f"an empty {t} or {g}",
                    "write 0 and the open day for an open end",
                ),
                (f"{g} NOT IN (0, 1, 2, 3)", f"{g} outside the granularity enum", f"{g} is the {gran}"),
                (
                    f"({g} = 0) <> ({t} = {inf})",
                    f"{t} and {g} disagree",
                    f"an open end is {g} = 0 with {t} = {inf}",
                ),
                (f"{g} > 0 AND abs({t}) >= {POS_INF}", f"{t} out of range", "days are ordinals of the dates"),
            ]
        checks.append(("t0 > t1", "a start after its end (t0 > t1)", "swap or fix the times"))
    if has_id:
        checks.append(("id IS NULL", "an empty id", "number the rows 0, 1, 2…"))
        checks.append(
            (
                "id IN (SELECT id FROM p GROUP BY id HAVING count(*) > 1)",
                "a duplicate id",
                "ids must be unique",
            )
        )
    order = "rowid"
    for cond, what, fix in checks:
        found = _first_bad(cur, cond, order)
        if found is not None:
            row, n = found
            raise _schema_error(facts_file, f"row {row} has {what} ({n:,} row(s) like it)", fix)


def import_parquet(
    directory: str | Path, path: str | Path | None = None, *, name: str | None = None, strict: bool = True
) -> DuckDBStore:
    """A store (in memory, or the new file ``path``) holding the rows of a Parquet export, or of an outside
    Parquet file with ``subject, relation, object, start[, end]`` (ISO text; no ``end`` column: events).

    The columns and rows are checked before anything is written (:func:`_check_columns`,
    :func:`_check_rows`; an outside file's rows go through the loaders' :class:`FactBuilder`, so its
    rules hold, ``strict`` or skipping bad rows): a malformed file is a DataError naming the column, the
    row and the fix, never a traceback or a wrong fact. A file ``path`` is built under a temporary name
    and renamed when complete (:func:`new_store_file`): a failed or killed import leaves no ``.duckdb``."""
    src = Path(directory)
    facts_file = src / FACTS_FILE if src.is_dir() else src
    if not facts_file.is_file():
        raise NotFoundError(
            f"no {FACTS_FILE} in {str(src)!r}; export one with `tkgqa kg convert … --to parquet`"
        )
    store_name = name or (src.stem if src.is_dir() else facts_file.stem)
    if path is not None:
        with new_store_file(Path(path)) as tmp:
            _import_into(DuckDBStore(name=store_name, path=tmp), facts_file, src, strict).close()
        return DuckDBStore.open(path, name=store_name)
    return _import_into(DuckDBStore(name=store_name), facts_file, src, strict)


def _import_into(store: DuckDBStore, facts_file: Path, src: Path, strict: bool) -> DuckDBStore:
    try:
        _fill(store, facts_file, strict)
        return _with_labels(store, src)
    except BaseException:
        store.close()
        raise


def _fill(store: DuckDBStore, facts_file: Path, strict: bool) -> None:
    sh, cur = store._sh, store._cur()
    try:
        cur.execute(f"CREATE TEMP TABLE p AS SELECT * FROM read_parquet('{_sql_path(facts_file)}')")
    except Exception as exc:
        raise DataError(
            f"cannot read this Parquet file ({str(exc).splitlines()[0][:200]})", path=str(facts_file)
        ) from None
    types = {row[0]: str(row[1]) for row in cur.execute("DESCRIBE p").fetchall()}
    export = _check_columns(types, facts_file)
    has_id = "id" in types
    if not export:  # an outside file: ISO start/end text, parsed by the loaders' rules
        _fill_outside(store, cur, facts_file, "end" in types, strict)
        return
    _check_rows(cur, facts_file, export, has_id)
    cur.execute(
        "UPDATE p SET subject = nfc_normalize(subject), relation = nfc_normalize(relation), "
        "object = nfc_normalize(object)"
    )
    rec = "epoch_us(recorded_at)" if "recorded_at" in types else str(next_tx(sh, None))
    ret = "epoch_us(retracted_at)" if "retracted_at" in types else "NULL"
    order = "id" if has_id else "rowid"
    with sh.lock:
        cur.execute("BEGIN")
        for table, sql in (
            (
                "entities",
                f"SELECT subject AS name, {order} * 2 AS k FROM p "
                f"UNION ALL SELECT object, {order} * 2 + 1 FROM p",
            ),
            ("relations", f"SELECT relation AS name, {order} AS k FROM p"),
        ):
            cur.execute(
                f"INSERT INTO {table} SELECT row_number() OVER (ORDER BY k) - 1, name "
                f"FROM (SELECT name, min(k) AS k FROM ({sql}) GROUP BY name)"
            )
        cur.execute(
            f"""INSERT INTO facts SELECT {"p.id" if has_id else "row_number() OVER (ORDER BY p.rowid) - 1"},
                es.id, rl.id, eo.id, t0, t1, g0, g1, {rec}, {ret}
            FROM p JOIN entities es ON p.subject = es.name JOIN relations rl ON p.relation = rl.name
                JOIN entities eo ON p.object = eo.name ORDER BY es.id, t0"""
        )
        cur.execute("INSERT INTO facts_by_o SELECT * FROM facts ORDER BY o, t0, id")
        cur.execute("DROP TABLE p")
        cur.execute("COMMIT")
        load_state(sh)
        refresh(sh)  # the read path's snapshot of the rows just written


def _time_text(col: str, types: str) -> str:
    if types == "DATE":
        return f"strftime({col}, '%Y-%m-%d')"
    return f"CAST({col} AS VARCHAR)"


def _fill_outside(store: DuckDBStore, cur: Any, facts_file: Path, has_end: bool, strict: bool) -> None:
    """An outside file's rows through :class:`FactBuilder` (names, times, start ≤ end: the loaders' rules;
    a NULL or empty end is open, no ``end`` column makes events), then one append."""
    from .builder import FactBuilder

    types = {row[0]: str(row[1]) for row in cur.execute("DESCRIBE p").fetchall()}
    end = _time_text('"end"', types["end"]) if has_end else "NULL"
    start = _time_text('"start"', types["start"])
    rows = cur.execute(f"SELECT subject, relation, object, {start}, {end} FROM p ORDER BY rowid").fetchall()
    cur.execute("DROP TABLE p")
    b = FactBuilder(str(facts_file), "parquet", strict)
    b.hint = "the line number is the row of the Parquet file; fix or drop that row"
    for i, (s, r, o, start, stop) in enumerate(rows, 1):
        b.n_lines += 1
        b.add(i, s or "", r or "", o or "", start or "", (stop or "") if has_end else None)
    store.add(b.facts())


@contextmanager
def new_store_file(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to build a new store in, renamed to ``path`` when the block ends
    without error, removed (with DuckDB's write-ahead log) otherwise. ``path`` must not exist: a conversion
    never writes into an existing file. A killed process leaves only a hidden ``.NAME.PID.partial`` file
    (never a ``.duckdb`` that looks complete), so running the conversion again works."""
    path = path.expanduser()
    if path.exists():
        raise ConfigError(f"{str(path)!r} already exists; convert into a new file (or delete it first)")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        try:
            yield tmp
        except ConfigError as exc:  # e.g. a folder that cannot hold files: said of the path the user gave
            raise ConfigError(str(exc).replace(str(tmp), str(path))) from None
        if snapshot_path(tmp).is_dir():  # the read path's snapshot travels with the file (still current)
            shutil.rmtree(snapshot_path(path), ignore_errors=True)
            os.replace(snapshot_path(tmp), snapshot_path(path))
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(snapshot_path(tmp), ignore_errors=True)


def _with_labels(store: DuckDBStore, src: Path) -> DuckDBStore:
    labels_file = src / LABELS_FILE
    if src.is_dir() and labels_file.is_file():
        rows = (
            store._cur()
            .execute(f"SELECT name, label FROM read_parquet('{_sql_path(labels_file)}')")
            .fetchall()
        )
        store.set_labels(dict(rows))
    return store


def _finish(kg: TemporalKG, path: Path, fmt: str, labels: Any) -> TemporalKG:
    from .builder import LoadReport

    if isinstance(labels, Mapping):
        kg.set_labels(labels)
    elif labels is not None:
        raise ConfigError(f"the {fmt} format keeps its labels inside; pass labels= as a mapping, not files")
    kg.name = path.stem if path.suffix else path.name
    kg.load_report = LoadReport(str(path), fmt, n_facts=len(kg))
    return kg


def load_duckdb(path: str | Path, *, strict: bool = False, labels: Any = None, **options: Any) -> TemporalKG:
    """The live facts of a ``.duckdb`` store as an in-memory ``TemporalKG`` (opened read-only)."""
    p = Path(path)
    with DuckDBStore.open(p, read_only=True, snapshot=False) as store:
        kg = store.to_kg()
    return _finish(kg, p, "duckdb", labels)


def load_parquet(path: str | Path, *, strict: bool = False, labels: Any = None, **options: Any) -> TemporalKG:
    """The live facts of a Parquet export (a directory, or a ``.parquet`` file) as a ``TemporalKG``."""
    p = Path(path)
    store = import_parquet(p, strict=strict)
    try:
        kg = store.to_kg()
    finally:
        store.close()
    return _finish(kg, p, "parquet", labels)


def _is_parquet_dir(names: Sequence[str]) -> bool:
    return FACTS_FILE in names


DUCKDB = register_format(
    KGFormat(
        "duckdb",
        load_duckdb,
        suffixes=(".duckdb", ".ddb"),
        cacheable=False,
        persistent=True,
        description="a tkgqa DuckDB store (tkgqa.kg.duckdb_store), loaded into memory read-only",
    )
)
PARQUET = register_format(
    KGFormat(
        "parquet",
        load_parquet,
        suffixes=(".parquet",),
        cacheable=False,
        directory=True,
        detect=_is_parquet_dir,
        description="a Parquet export directory (facts.parquet, labels.parquet) of `tkgqa kg convert`",
    )
)
__all__ = ["DUCKDB", "PARQUET", "export_parquet", "import_parquet", "load_duckdb", "load_parquet"]
