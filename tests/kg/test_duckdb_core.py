"""The DuckDB store's read path (issue #31): the memory-mapped snapshot of the compact core plus the delta
of appends — current on open, stale or partial snapshots rebuilt (never used), appends and retractions
visible at once, rebuilds under concurrent readers, a rebuild killed with SIGKILL (nothing lost, no stale
answer), ``known_at`` views from the core. The oracle is the SQL path of the same database (the store with
its core set aside) and the in-memory store on the same facts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("duckdb", reason="needs the [store] extra (duckdb, pyarrow)")
pytest.importorskip("pyarrow", reason="needs the [store] extra (duckdb, pyarrow)")

from tkgqa.kg import Fact, TemporalKG, duckdb_core
from tkgqa.kg.core_files import is_mapped, read_manifest
from tkgqa.kg.duckdb_core import snapshot_path
from tkgqa.kg.duckdb_store import DuckDBStore
from tkgqa.time import TimePoint

FAR = datetime(9000, 1, 1, tzinfo=UTC)  # a known_at view this late shows the live rows


def facts(n: int, seed: int = 0, prefix: str = "E") -> list[Fact]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s, o = (f"{prefix}{int(i)}" for i in rng.integers(0, 40, 2))
        year = int(rng.integers(2000, 2020))
        start = TimePoint(year, int(rng.integers(1, 13)))
        out.append(Fact(s, f"r{int(rng.integers(0, 5))}", o, start, start if rng.random() < 0.7 else None))
    return out


def answers(store: DuckDBStore | TemporalKG) -> list[object]:
    """A fixed battery of queries over every path of the core (patterns, windows, walks, snapshots)."""
    out: list[object] = [len(store), list(store)]
    for e in ("E1", "E7", "E13", "F2"):
        out += [
            store.facts(subject=e),
            store.facts(subject=e, relation="r1", time="2005-2012"),
            store.facts(object=e, time="2010"),
            store.facts(subject=e, object="E3"),
            store.incident(e),
            store.hop([e, "E2"], time="2001-2015"),
            store.time_span(e),
            store.relation_counts(e),
        ]
    snap = store.as_of("2010-06")
    out += [len(snap), snap.facts(relation="r2"), snap.incident("E5"), snap.time_span()]
    out += [store.count(relation="r3", time="2008"), store.facts(time="2015-03")]
    return out


def sql_answers(store: DuckDBStore, tx: datetime | None = None) -> list[object]:
    """The battery on the SQL path of the same database (of its ``known_at(tx)`` view if given): the
    store's core is set aside while it runs (under the writer lock: no write or snapshot swap meanwhile)."""
    sh = store._sh
    with sh.lock:
        core, sh.core = sh.core, None
        try:
            view = store if tx is None else store.known_at(tx)
            assert view._reader() is None  # the SQL path
            return answers(view)
        finally:
            sh.core = core


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "kg.duckdb"
    with DuckDBStore.open(path) as store:
        store.add(facts(400))
    return path


def test_reopened_store_reads_a_current_mapped_snapshot(db: Path) -> None:
    with DuckDBStore.open(db) as store:
        core = store._sh.core
        assert core is not None and core.n_delta == 0
        assert is_mapped(core.to_arrays()[3]["sr_ids"])
        manifest = read_manifest(snapshot_path(db))
        assert manifest is not None and manifest["n_rows"] == 400
        assert answers(store) == sql_answers(store) == answers(TemporalKG(facts(400)))
    with DuckDBStore.open(db, read_only=True) as reader:  # a reader process maps the same files
        assert answers(reader) == answers(TemporalKG(facts(400)))


def test_open_empties_duckdbs_buffer_pool_and_keeps_the_memory_limit(db: Path) -> None:
    """The blocks read while opening are evicted once the snapshot serves the reads (issue #31: resident
    bytes per fact); the memory limit is the one given, or DuckDB's default, afterwards."""
    import duckdb

    held_sql = "SELECT sum(memory_usage_bytes) FROM duckdb_memory()"
    with DuckDBStore.open(db, read_only=True, snapshot=False) as sql:  # the same reads, nothing evicted
        kept = sql._sh.con.execute(held_sql).fetchone()[0]
    setting = "SELECT current_setting('memory_limit')"
    for limit in (None, "300MB"):
        expected = duckdb.connect(config={"memory_limit": limit} if limit else {}).execute(setting).fetchone()
        with DuckDBStore.open(db, read_only=True, memory_limit=limit) as store:
            con = store._sh.con
            assert con.execute(held_sql).fetchone()[0] < kept
            assert con.execute(setting).fetchone() == expected
            assert answers(store) == answers(TemporalKG(facts(400)))  # and it still reads


def test_appends_and_retractions_reach_the_core_at_once(db: Path) -> None:
    with DuckDBStore.open(db) as store:
        new = facts(30, seed=1, prefix="F")
        store.add(new)
        core = store._sh.core
        assert core is not None and core.n_delta == 30
        assert store.facts(subject="F2") == [f for f in TemporalKG(new).facts(subject="F2")]
        gone = store.facts(subject="E1")[:3] + store.facts(subject="F2")[:1]
        assert store.retract(gone) == 4
        assert not set(gone) & set(store.incident("E1")) and not set(gone) & set(store.facts(subject="F2"))
        assert answers(store) == sql_answers(store)
        store.add(gone[:1])  # a retracted fact may be added again: a new row
        assert gone[0] in store.facts(subject=gone[0].subject)
        assert answers(store) == sql_answers(store)
    with DuckDBStore.open(db) as again:  # the snapshot was stale: rebuilt on open, same answers
        assert again._sh.core is not None and again._sh.core.n_delta == 0
        assert answers(again) == sql_answers(again)


@pytest.mark.parametrize("damage", ["no-manifest", "truncated", "stale"])
def test_partial_or_stale_snapshots_are_rebuilt_never_used(db: Path, damage: str) -> None:
    folder = snapshot_path(db)
    with DuckDBStore.open(db) as store:
        expected = answers(store)
        store.add(facts(5, seed=2, prefix="G"))
        expected_after = answers(store)
    if damage == "no-manifest":  # the rebuild of the last open was killed before its manifest
        (folder / "manifest.json").unlink()
    elif damage == "truncated":
        (folder / "sr_ids.npy").write_bytes((folder / "sr_ids.npy").read_bytes()[:-8])
    # "stale": the snapshot of the first open does not hold the 5 appended rows
    assert expected != expected_after
    with DuckDBStore.open(db) as store:
        assert answers(store) == expected_after == sql_answers(store)
        assert read_manifest(folder)["n_rows"] == 405  # type: ignore[index]


def test_rebuild_under_concurrent_readers_and_appends(db: Path) -> None:
    with DuckDBStore.open(db) as store:
        expected = answers(store)
        errors: list[str] = []
        stop = threading.Event()

        def read() -> None:
            while not stop.is_set():
                got = answers(store)
                if got[2:34] != expected[2:34]:  # the per-entity queries: the appends touch only H entities
                    errors.append("a reader saw a different answer")
                    return

        readers = [threading.Thread(target=read) for _ in range(2)]
        for t in readers:
            t.start()
        try:
            for i in range(4):
                store.add([Fact(f"H{i}", "r9", "H0", TimePoint(2001), TimePoint(2001))])
                store.refresh_snapshot()
                assert store.facts(subject=f"H{i}")  # visible at once, before and after each swap
        finally:
            stop.set()
            for t in readers:
                t.join()
        assert not errors
        assert store._sh.core is not None and store._sh.core.n_delta == 0 and len(store) == 404


def test_a_large_delta_is_folded_in_the_background(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(duckdb_core, "DELTA_MIN", 10)
    with DuckDBStore.open(db) as store:
        store.add(facts(150, seed=3, prefix="K"))  # more than a quarter of the core
        duckdb_core.wait_for_rebuild(store._sh)
        assert store._sh.core is not None and store._sh.core.n_delta == 0
        assert answers(store) == sql_answers(store)


_CHILD = textwrap.dedent(
    """
    import sys
    from tkgqa.kg import Fact
    from tkgqa.kg.duckdb_store import DuckDBStore
    from tkgqa.time import TimePoint

    store = DuckDBStore.open(sys.argv[1])
    i = 0
    while True:
        store.add([Fact(f"Z{i}", "r1", "E1", TimePoint(2003), TimePoint(2003))])
        print(i, flush=True)  # committed
        store.refresh_snapshot()
        i += 1
    """
)


def test_kill_9_during_rebuilds_loses_nothing_and_serves_nothing_stale(db: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(db)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert child.stdout is not None
    committed = -1
    deadline = time.monotonic() + 60
    while committed < 5 and time.monotonic() < deadline:
        committed = int(child.stdout.readline())
    time.sleep(0.05)  # somewhere inside a rebuild or an append
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert committed >= 5
    with DuckDBStore.open(db) as store:
        names = {f.subject for f in store.facts(relation="r1", object="E1") if f.subject.startswith("Z")}
        assert {f"Z{i}" for i in range(committed + 1)} <= names  # every committed append is there
        assert answers(store) == sql_answers(store)  # and the snapshot answers as the database
        assert len(store) == 400 + len(names)


def at(minute: int) -> datetime:
    return datetime(2026, 1, 1, 12, minute, tzinfo=UTC)


def test_known_at_views_are_served_from_the_core_as_the_database_says(tmp_path: Path) -> None:
    """Appends at several transaction times (two at the same time), retractions, a retracted fact added
    again: every ``known_at`` view (and its ``as_of`` view, and ``as_of`` then ``known_at``) answers from
    the core exactly as SQL does, and as the in-memory store holding what the store said then."""
    fs = facts(400)
    path = tmp_path / "h.duckdb"
    with DuckDBStore.open(path) as store:
        store.append(fs[:150], at=at(0))
        store.append(fs[150:300], at=at(10))
        store.retract(fs[100:130], at=at(20))
        store.append(fs[300:350], at=at(30))
        store.append([*fs[350:], *fs[110:120]], at=at(30))  # same time; ten retracted facts added again
        store.retract(fs[0:5] + fs[310:320], at=at(40))
    live = [f for f in fs[:100] + fs[130:] if f not in fs[0:5] + fs[310:320]]
    said = {  # what the store said at each time, in the order it recorded the facts
        -1: [],
        0: fs[:150],
        5: fs[:150],
        10: fs[:300],
        20: fs[:100] + fs[130:300],
        30: fs[:100] + fs[130:] + fs[110:120],
        40: fs[5:100] + fs[130:310] + fs[320:] + fs[110:120],
    }
    assert live == [f for f in said[40] if f not in fs[110:120]]
    for reopen in (False, True):  # the log read from the database, or kept current by the writes
        with DuckDBStore.open(path) as store:
            if reopen:
                store.known_at(at(0)).facts()  # read the log, then write through it
                store.append(fs[:2], at=at(50))  # two retracted facts again: new rows
                store.retract(fs[200:210], at=at(51))
                said[50] = said[40] + fs[:2]
                said[51] = [f for f in said[50] if f not in fs[200:210]]
            for minute, expected in said.items():
                tx = at(minute) if minute >= 0 else datetime(2025, 1, 1, tzinfo=UTC)
                view = store.known_at(tx)
                assert view._reader() is not None  # served from the core
                assert list(view) == expected, minute
                assert answers(view) == sql_answers(store, tx) == answers(TemporalKG(expected)), minute
                assert list(view.as_of("2010")) == list(store.as_of("2010").known_at(tx))
            assert answers(store.known_at(FAR)) == answers(store)


def test_known_at_falls_back_to_sql_when_ids_do_not_follow_time(tmp_path: Path) -> None:
    path = tmp_path / "odd.duckdb"
    with DuckDBStore.open(path) as store:
        store.append(facts(20), at=at(0))
        store.append(facts(20, seed=1, prefix="F"), at=at(10))
        rows = list(store)  # in id order
        sh = store._sh
        sh.con.execute("UPDATE facts SET recorded_at = recorded_at + 3600000000 * (id % 2)")  # interleaved
        sh.con.execute("UPDATE facts_by_o SET recorded_at = recorded_at + 3600000000 * (id % 2)")
        sh.txlog, sh.txlog_read = None, False
        view = store.known_at(at(10))
        assert view._reader() is None  # read with SQL
        assert list(view) == rows[::2]  # the odd ids were recorded an hour later


def test_kg_index_command_builds_the_snapshot(db: Path) -> None:
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app

    _load_commands()
    (snapshot_path(db) / "manifest.json").unlink(missing_ok=True)
    result = CliRunner().invoke(app, ["kg", "index", str(db)])
    assert result.exit_code == 0, result.output
    assert "indexed 400 live facts" in result.output
    assert read_manifest(snapshot_path(db))["n_rows"] == 400  # type: ignore[index]
    missing = CliRunner().invoke(app, ["kg", "index", str(db.with_name("nope.duckdb"))])
    assert missing.exit_code == 2 and "does not exist" in missing.output
