"""The read path of :class:`~tkgqa.kg.duckdb_store.DuckDBStore`: a snapshot of the compact core + a delta.

DuckDB stays the durable, bi-temporal record; the live store and its ``as_of`` views are answered by a
:class:`~tkgqa.kg.TemporalKG` over the compact core of :mod:`tkgqa.kg.index` built from every row of
``facts`` in id order (so a core fact id *is* the row id; retracted rows are withdrawn from it), saved beside
the database as ``<file>.duckdb.core/`` and opened memory-mapped. Appends and retractions made since the
snapshot are applied to that store as they commit (its in-memory delta and withdrawn ids), under the
store's writer lock, so an appended fact is visible to the next question.

**Stale or partial snapshots are never used.** The snapshot's manifest, written last (:mod:`tkgqa.kg.
core_files`), records the database's row count and last transaction time; a folder without a manifest (a
rebuild killed half-way), or whose stamp is not the database's (written to since, e.g. by a process that
had no snapshot), is rebuilt on open.

**Rebuilds never block readers.** A rebuild reads the rows in one DuckDB transaction (a consistent state),
builds and writes the new core to a temporary folder and renames it into place; then, under the writer lock,
it applies the rows appended and retracted meanwhile and swaps the store's reference. Readers keep using
the previous core (its mapped pages stay valid after the rename) until the swap. It runs when the delta
outgrows a quarter of the core (in a background thread), on open when needed, and by ``tkgqa kg index``.

**Transaction-time views from the core too.** ``known_at(t)`` shows the rows recorded at or before ``t``
and not retracted by then. Rows get ids in the order they are written and transaction times never go
back, so the rows recorded by ``t`` are the ids below a bound, and the view is the core restricted to
those ids minus the rows retracted by ``t`` (:meth:`~tkgqa.kg.memory.TemporalKG.restricted`). The
:class:`TxLog` holding the bounds (one entry per transaction time) and the retractions is read from the
database on the first ``known_at`` (a ``GROUP BY``, no row is kept) and kept current by every write after
it, under the writer lock. A store whose ids do not follow its transaction times (possible only for rows
imported with their own ``recorded_at``) answers ``known_at`` with SQL, as before.
"""

from __future__ import annotations

import bisect
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DataError
from .core_files import open_core, read_manifest, remove_stale_temporaries, save_core
from .index import COLUMNS, AnyArray, IntArray, build_core, core_bounds

if TYPE_CHECKING:
    from .duckdb_schema import Shared
    from .memory import TemporalKG

DELTA_MIN = 50_000  # a background rebuild starts once the delta exceeds max(DELTA_MIN, core size / 4)


def snapshot_path(db: Path) -> Path:
    """Where the snapshot of the database file ``db`` lives: ``<db>.core/`` beside it."""
    return db.with_name(db.name + ".core")


def _stamp(cur: Any) -> tuple[int, int]:
    """``(row count, last transaction time)`` of the database as ``cur`` sees it (as ``load_state``)."""
    n_rows, last = cur.execute(
        "SELECT coalesce(max(id) + 1, 0), "
        "coalesce(max(greatest(recorded_at, coalesce(retracted_at, 0))), 0) FROM facts"
    ).fetchone()
    return int(n_rows), int(last)


def _store(sh: Shared, arrays: dict[str, AnyArray], bounds: tuple[int, bool], dead: AnyArray) -> TemporalKG:
    """The store over core ``arrays`` that shares the database's vocabulary (names ↔ ids)."""
    from .memory import TemporalKG

    cols = {c: arrays[f"col_{c}"] for c in COLUMNS}
    kg = TemporalKG.from_arrays(sh.ent, sh.rel, cols, index=arrays, bounds=bounds, name="core")
    kg._ent_id, kg._rel_id = sh.ent_id, sh.rel_id  # one vocabulary: the database's
    kg._auto_compact = False  # the delta is folded by a snapshot rebuild, into a mapped file
    if len(dead):
        kg.withdraw(np.asarray(dead, dtype=np.int64).tolist())
    return kg


def _save_and_map(
    sh: Shared, core: dict[str, AnyArray], dead: AnyArray, stamp: tuple[int, int], bounds: tuple[int, bool]
) -> dict[str, AnyArray]:
    """Write the snapshot (when the database is a file) and return its arrays mapped from disk; on a
    read-only folder, the arrays in memory, with a warning."""
    if sh.path is None:
        return core
    target = snapshot_path(sh.path)
    meta = {"n_rows": stamp[0], "last_tx": stamp[1], "max_dur": bounds[0], "ordered": bounds[1]}
    try:
        remove_stale_temporaries(target)
        save_core(target, {**core, "dead": np.asarray(dead, dtype=np.int64)}, meta)
        arrays, _ = open_core(target)
    except (OSError, DataError) as exc:
        warnings.warn(f"could not write the store's snapshot {target}: {exc}", RuntimeWarning, stacklevel=3)
        return core
    return arrays


def build_snapshot(sh: Shared) -> tuple[TemporalKG | None, int]:
    """A new core of the database (saved and mapped when it is a file) and the row count it holds;
    ``None`` when the row ids are not ``0 .. n-1`` (a core id must be the row id: such a store, e.g.
    imported from an edited Parquet file, is read with SQL)."""
    cur = sh.con.cursor()
    try:
        cur.execute("BEGIN TRANSACTION")  # one consistent state of the database
        stamp = _stamp(cur)
        (n, distinct, low) = cur.execute("SELECT count(*), count(DISTINCT id), min(id) FROM facts").fetchone()
        if n and not (n == distinct == stamp[0] and low == 0):
            cur.execute("COMMIT")
            warnings.warn(
                "this store's fact ids are not 0..n-1: it is read with SQL (slower); "
                "`tkgqa kg convert` it into a new file to renumber them",
                RuntimeWarning,
                stacklevel=3,
            )
            return None, stamp[0]
        found = cur.execute(f"SELECT {', '.join(COLUMNS)} FROM facts ORDER BY id").fetchnumpy()
        dead = cur.execute("SELECT id FROM facts WHERE retracted_at IS NOT NULL ORDER BY id").fetchnumpy()[
            "id"
        ]
        cur.execute("COMMIT")
    finally:
        cur.close()
    cols = {c: np.asarray(found[c]) for c in COLUMNS}
    del found
    bounds = core_bounds(cols)
    core = build_core(cols, len(sh.ent), len(sh.rel))
    del cols
    arrays = _save_and_map(sh, core, np.asarray(dead), stamp, bounds)
    return _store(sh, arrays, bounds, np.asarray(dead)), stamp[0]


def adopt_core(sh: Shared, core: dict[str, AnyArray], bounds: tuple[int, bool]) -> None:
    """Make ``core`` (the arrays of a store just bulk-copied into the database, ids = row ids) the
    snapshot, without reading the rows back."""
    stamp = _stamp(sh.con.cursor())
    dead = np.zeros(0, dtype=np.int64)
    sh.core = _store(sh, _save_and_map(sh, core, dead, stamp, bounds), bounds, dead)


def open_snapshot(sh: Shared) -> TemporalKG | None:
    """The saved snapshot, mapped, when it is complete and current (its stamp is the database's)."""
    if sh.path is None:
        return None
    folder = snapshot_path(sh.path)
    manifest = read_manifest(folder)
    if manifest is None or (manifest.get("n_rows"), manifest.get("last_tx")) != (sh.next_id, sh.last_tx):
        return None
    try:
        arrays, manifest = open_core(folder)
        bounds = (int(manifest["max_dur"]), bool(manifest["ordered"]))
        if len(arrays["col_s"]) != sh.next_id or len(arrays["s_off"]) > len(sh.ent) + 1:
            return None
        return _store(sh, arrays, bounds, arrays["dead"])
    except (DataError, KeyError, TypeError, ValueError):
        return None


def ensure_core(sh: Shared) -> None:
    """Open the current snapshot, or build it (on open: the store answers from it from the start)."""
    kg = open_snapshot(sh)
    if kg is None:
        kg, _ = build_snapshot(sh)
    sh.core = kg


def refresh(sh: Shared) -> None:
    """Rebuild the snapshot from the database and swap it in (readers are never blocked: see the module
    docstring); rows appended or retracted during the build are applied before the swap."""
    kg, n_rows = build_snapshot(sh)
    if kg is None:
        sh.core = None
        return
    with sh.lock:
        cur = sh.con.cursor()
        try:
            late = cur.execute(
                f"SELECT {', '.join(COLUMNS)} FROM facts WHERE id >= ? ORDER BY id", [n_rows]
            ).fetchall()
            dead = [
                i for (i,) in cur.execute("SELECT id FROM facts WHERE retracted_at IS NOT NULL").fetchall()
            ]
        finally:
            cur.close()
        kg.append_rows(late)
        if dead:
            kg.withdraw(dead)
        sh.core = kg


def refresh_in_background(sh: Shared) -> None:
    """Start a rebuild in a thread when the delta has outgrown the core and none runs already."""
    core = sh.core
    if core is None or core.n_delta <= max(DELTA_MIN, len(core) // 4):
        return
    with sh.lock:
        if sh.rebuild is not None and sh.rebuild.is_alive():
            return
        sh.rebuild = threading.Thread(
            target=_refresh_quietly, args=(sh,), name="tkgqa-core-rebuild", daemon=True
        )
        sh.rebuild.start()


def _refresh_quietly(sh: Shared) -> None:
    try:
        refresh(sh)
    except Exception as exc:  # the store keeps answering from the previous core and its delta
        warnings.warn(f"snapshot rebuild failed ({type(exc).__name__}: {exc})", RuntimeWarning, stacklevel=1)


def wait_for_rebuild(sh: Shared) -> None:
    """Wait for a background rebuild to finish (before closing the connection it reads)."""
    thread = sh.rebuild
    if thread is not None and thread is not threading.current_thread():
        thread.join()


class TxLog:
    """When the rows of a store were recorded and retracted, as ``known_at`` needs them (see the module
    docstring): ``runs = (times, firsts)``, ``firsts[k]`` the first id recorded at transaction time
    ``times[k]`` (both ascending); ``gone = (times, ids)``, the retractions in the order they were made
    (times ascending). Each pair is replaced whole on a write, so a reader never sees a half-updated one."""

    def __init__(self, runs: list[tuple[int, int]], gone: list[tuple[int, int]]) -> None:
        self.runs: tuple[list[int], list[int]] = ([t for t, _ in runs], [i for _, i in runs])
        self.gone: tuple[list[int], list[int]] = ([t for t, _ in gone], [i for _, i in gone])
        self._dead: tuple[int, IntArray] = (0, np.zeros(0, dtype=np.int64))  # (k, sorted ids) last asked

    def recorded(self, tx: int, first_id: int) -> None:
        """Rows from ``first_id`` on were appended at ``tx`` (not before the last transaction time)."""
        times, firsts = self.runs
        if not times or tx > times[-1]:
            self.runs = ([*times, tx], [*firsts, first_id])

    def retracted(self, tx: int, ids: list[int]) -> None:
        """The rows ``ids`` were retracted at ``tx``."""
        times, gone = self.gone
        self.gone = ([*times, *([tx] * len(ids))], [*gone, *ids])

    def view(self, core: TemporalKG, tx: int) -> TemporalKG:
        """``core`` as the database was at transaction time ``tx``."""
        times, firsts = self.runs
        k = bisect.bisect_right(times, tx)
        upto = firsts[k] if k < len(firsts) else None  # None: every row written so far
        gone_at, gone = self.gone
        j = bisect.bisect_right(gone_at, tx)
        cached = self._dead
        if cached[0] != j:
            cached = self._dead = (j, np.sort(np.asarray(gone[:j], dtype=np.int64)))
        return core.restricted(upto, cached[1])


def tx_log(sh: Shared) -> TxLog | None:
    """The store's :class:`TxLog`, read on first use; ``None`` when its ids do not follow its transaction
    times (its ``known_at`` views are then answered with SQL)."""
    if sh.txlog_read:
        return sh.txlog
    with sh.lock:  # no write between the read and the log taking over
        if not sh.txlog_read:
            cur = sh.con.cursor()
            try:
                runs = cur.execute(
                    "SELECT recorded_at, min(id), max(id), count(*) FROM facts GROUP BY recorded_at "
                    "ORDER BY recorded_at"
                ).fetchall()
                gone = cur.execute(
                    "SELECT retracted_at, id FROM facts WHERE retracted_at IS NOT NULL "
                    "ORDER BY retracted_at, id"
                ).fetchall()
            finally:
                cur.close()
            follows = all(hi - lo + 1 == n for _, lo, hi, n in runs) and all(
                lo == (runs[k - 1][2] + 1 if k else 0) for k, (_, lo, _, _) in enumerate(runs)
            )
            sh.txlog = TxLog([(t, lo) for t, lo, _, _ in runs], gone) if follows else None
            sh.txlog_read = True
    return sh.txlog
