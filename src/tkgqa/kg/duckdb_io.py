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

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError, NotFoundError
from .duckdb_schema import load_state
from .duckdb_store import DuckDBStore
from .fact import Fact
from .formats import KGFormat, register_format

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


def import_parquet(
    directory: str | Path, path: str | Path | None = None, *, name: str | None = None
) -> DuckDBStore:
    """A store (in memory, or the new file ``path``) holding the rows of a Parquet export."""
    src = Path(directory)
    facts_file = src / FACTS_FILE if src.is_dir() else src
    if not facts_file.is_file():
        raise NotFoundError(
            f"no {FACTS_FILE} in {str(src)!r}; export one with `tkgqa kg convert … --to parquet`"
        )
    store = DuckDBStore(name=name or (src.stem if src.is_dir() else facts_file.stem), path=path)
    if len(store):
        raise ConfigError(f"store {str(path)!r} already holds facts; import into a new file")
    sh, cur = store._sh, store._cur()
    try:
        cur.execute(f"CREATE TEMP TABLE p AS SELECT * FROM read_parquet('{_sql_path(facts_file)}')")
    except Exception as exc:
        raise DataError(
            f"cannot read this Parquet file ({str(exc).splitlines()[0][:200]})", path=str(facts_file)
        ) from None
    columns = {row[0] for row in cur.execute("DESCRIBE p").fetchall()}
    if not {"subject", "relation", "object"} <= columns:
        raise DataError(
            f"needs columns subject, relation, object (has {sorted(columns)})", path=str(facts_file)
        )
    if not {"t0", "t1", "g0", "g1"} <= columns:  # an outside file: ISO start/end text, parsed by our rules
        rows = cur.execute('SELECT subject, relation, object, "start", "end" FROM p').fetchall()
        cur.execute("DROP TABLE p")
        store.add(
            Fact.from_dict(dict(zip(("subject", "relation", "object", "start", "end"), r, strict=True)))
            for r in rows
        )
        return _with_labels(store, src)
    has_id = "id" in columns
    rec = "epoch_us(recorded_at)" if "recorded_at" in columns else str(store._tick(None))
    ret = "epoch_us(retracted_at)" if "retracted_at" in columns else "NULL"
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
    return _with_labels(store, src)


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


def load_duckdb(path: str | Path, *, strict: bool = True, labels: Any = None, **options: Any) -> TemporalKG:
    """The live facts of a ``.duckdb`` store as an in-memory ``TemporalKG`` (opened read-only)."""
    p = Path(path)
    with DuckDBStore.open(p, read_only=True) as store:
        kg = store.to_kg()
    return _finish(kg, p, "duckdb", labels)


def load_parquet(path: str | Path, *, strict: bool = True, labels: Any = None, **options: Any) -> TemporalKG:
    """The live facts of a Parquet export (a directory, or a ``.parquet`` file) as a ``TemporalKG``."""
    p = Path(path)
    store = import_parquet(p)
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
