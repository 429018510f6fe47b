"""The DuckDB store beyond the conformance suite: bi-temporal history (``known_at``, ``retract``),
persistence and the one-writer rule, Parquet import/export, the ``duckdb``/``parquet`` KG formats and
``tkgqa kg convert``."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

pytest.importorskip("duckdb", reason="needs the [store] extra (duckdb, pyarrow)")
pytest.importorskip("pyarrow", reason="needs the [store] extra (duckdb, pyarrow)")

from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.errors import ConfigError, NotFoundError
from tkgqa.kg import Fact, TemporalKG, load_demo_kg, load_kg
from tkgqa.kg.duckdb_io import export_parquet, import_parquet
from tkgqa.kg.duckdb_store import DuckDBStore
from tkgqa.time import TimePoint

P = TimePoint.of
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def pt(s: str, r: str, o: str, when: str) -> Fact:
    return Fact(s, r, o, P(when), P(when))


A = pt("Alice", "visit", "France", "2015-03-21")
B = pt("Bob", "visit", "Spain", "2016-05")
C = Fact("Carol", "member", "Club", P("2010"), P("2014"))


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.fixture
def history() -> DuckDBStore:
    """A at minute 0, B at 10, C at 20, A retracted at 30, A recorded again at 40."""
    store = DuckDBStore(name="hist")
    assert store.append([A], at=at(0)) == 1
    assert store.append([B], at=at(10)) == 1
    assert store.append([C, A], at=at(20)) == 1  # A is live: a duplicate
    assert store.retract([A], at=at(30)) == 1
    return store


# --- bi-temporal ---------------------------------------------------------------------------------------
def test_known_at_shows_what_the_store_said_then(history: DuckDBStore) -> None:
    assert list(history.known_at(at(-1))) == []
    assert list(history.known_at(at(0))) == [A]
    assert list(history.known_at(at(15))) == [A, B]
    assert list(history.known_at(at(25))) == [A, B, C]
    assert list(history.known_at(at(30))) == [B, C]  # retracted at 30: gone from then on
    assert list(history) == [B, C] and len(history) == 2
    assert history.facts(subject="Alice") == [] and history.has_entity("Alice")  # vocabulary stays


def test_a_retraction_is_invisible_before_it(history: DuckDBStore) -> None:
    just_before = at(30) - timedelta(microseconds=1)
    view = history.known_at(just_before)
    assert view.facts(subject="Alice") == [A] and view.count(relation="visit") == 2
    assert view.incident("France") == [A] and view.hop("Alice").n_facts == 1
    assert history.known_at(at(30)).facts(subject="Alice") == []
    assert history.known_at(just_before.isoformat()).facts(subject="Alice") == [A]  # ISO text works too


def test_appends_and_retractions_never_rewrite_history(history: DuckDBStore) -> None:
    assert history.append([A], at=at(40)) == 1  # recorded again: a new row, the old one stays retracted
    rows = history.history(subject="Alice")
    assert [(f, rec, ret) for f, rec, ret in rows] == [(A, at(0), at(30)), (A, at(40), None)]
    assert list(history) == [B, C, A]  # insertion order: the new row is the latest
    assert history.known_at(at(35)).facts(subject="Alice") == []
    assert history.known_at(at(45)).facts(subject="Alice") == [A]
    with pytest.raises(ConfigError, match="append-only"):
        history.append([pt("Dave", "visit", "Italy", "2017")], at=at(5))
    assert history.retract([pt("Zed", "visit", "Nowhere", "2017")]) == 0  # unknown: nothing to retract
    assert history.retract([B]) == 1 and history.retract([B]) == 0
    assert history.last_transaction is not None and history.last_transaction > at(40)


def test_known_at_and_as_of_compose(history: DuckDBStore) -> None:
    both = history.known_at(at(25)).as_of("2012")
    assert list(both) == [Fact("Carol", "member", "Club", P("2010"), None)]  # clipped at the cutoff
    assert list(history.as_of("2012").known_at(at(25))) == list(both)
    assert list(history.known_at(at(25)).as_of("2016")) == [A, C]  # B starts 2016-05: after the cutoff
    assert history.known_at(at(25)).as_of("2016").facts() == [C, A]  # C ended 2014: kept unclipped
    assert (
        history.known_at(at(25)).known_at(at(50)).facts() == history.known_at(at(25)).facts()
    )  # earlier wins
    assert both.live is history
    with pytest.raises(ConfigError):
        both.add([B])
    with pytest.raises(ConfigError):
        history.known_at(at(25)).retract([B])


def test_default_transaction_times_are_strictly_increasing() -> None:
    store = DuckDBStore([A])
    first = store.last_transaction
    store.retract([A])
    store.add([A])
    rows = store.history()
    assert first is not None and rows[0][1] == first
    assert rows[0][1] < rows[0][2] < rows[1][1]  # type: ignore[operator]
    assert store.known_at(first).facts() == [A]


# --- persistence, one writer ------------------------------------------------------------------------------
def test_a_store_file_persists_facts_labels_and_history(tmp_path: Path) -> None:
    path = tmp_path / "kg.duckdb"
    with DuckDBStore.open(path) as store:
        store.set_labels({"Alice": "Alice A."})
        store.append([A, B], at=at(0))
        store.retract([B], at=at(5))
        store.append([C], at=at(10))
    with DuckDBStore.open(path, read_only=True) as again:
        assert list(again) == [A, C] and again.label("Alice") == "Alice A." and again.name == "kg"
        assert list(again.known_at(at(1))) == [A, B]
        assert again.last_transaction == at(10)
        with pytest.raises(ConfigError, match="read-only"):
            again.add([B])
    with DuckDBStore.open(path) as writer:  # reopened read-write: appends continue the history
        assert writer.add([B]) == 1 and list(writer) == [A, C, B]
    with pytest.raises(NotFoundError):
        DuckDBStore.open(tmp_path / "missing.duckdb", read_only=True)


def test_one_writer_other_processes_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "kg.duckdb"
    code = (
        "import sys\nfrom tkgqa.errors import ConfigError\nfrom tkgqa.kg.duckdb_store import DuckDBStore\n"
        f"try:\n    DuckDBStore.open({str(path)!r}, read_only=True)\n"
        "except ConfigError as exc:\n    print(exc); sys.exit(3)\n"
    )
    with DuckDBStore.open(path) as writer:
        writer.add([A])
        held = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert held.returncode == 3 and "one writer" in held.stdout
    free = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert free.returncode == 0, free.stderr  # no writer: readers open it


def test_concurrent_appends_in_one_process_are_serialised() -> None:
    store = DuckDBStore(name="threads")
    facts = [pt(f"E{i % 7}", "r", f"E{i}", f"20{10 + i % 10}") for i in range(120)]
    errors: list[BaseException] = []

    def work(part: list[Fact]) -> None:
        try:
            for f in part:
                store.add([f, facts[0]])  # facts[0] is added by every thread: kept once
                store.facts(subject=f.subject)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(facts[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(store) == 120 and sorted(store, key=str) == sorted(facts, key=str)
    assert len(store.history()) == 120  # no duplicate rows


# --- Parquet and the KG formats ---------------------------------------------------------------------------
def test_parquet_round_trip_keeps_history_and_labels(history: DuckDBStore, tmp_path: Path) -> None:
    history.set_labels({"Bob": "Robert"})
    export_parquet(history, tmp_path / "pq")
    back = import_parquet(tmp_path / "pq")
    assert list(back) == list(history) and back.label("Bob") == "Robert"
    assert back.history() == history.history()
    assert list(back.known_at(at(25))) == [A, B, C]
    with pytest.raises(ConfigError, match="not empty"):
        export_parquet(history, tmp_path / "pq")


def test_an_outside_parquet_file_with_iso_times_imports(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "subject": ["Alice", "Carol"],
            "relation": ["visit", "member"],
            "object": ["France", "Club"],
            "start": ["2015-03-21", "2010"],
            "end": ["2015-03-21", "2014"],
        }
    )
    (tmp_path / "ext").mkdir()
    pq.write_table(table, tmp_path / "ext" / "facts.parquet")
    assert list(import_parquet(tmp_path / "ext")) == [A, C]
    kg = load_kg(tmp_path / "ext")  # a directory through the format registry
    assert isinstance(kg, TemporalKG) and list(kg) == [A, C] and kg.name == "ext"


def test_load_kg_reads_duckdb_and_parquet(tmp_path: Path) -> None:
    demo = load_demo_kg()
    store = DuckDBStore.from_kg(demo, tmp_path / "demo.duckdb")
    assert list(store) == list(demo)
    export_parquet(store, tmp_path / "pq")
    store.close()
    for path in (tmp_path / "demo.duckdb", tmp_path / "pq", tmp_path / "pq" / "facts.parquet"):
        kg = load_kg(path)
        assert isinstance(kg, TemporalKG) and list(kg) == list(demo), path
        assert kg.load_report is not None and kg.load_report.format in {"duckdb", "parquet"}
    first = next(iter(demo))
    assert first in load_kg(tmp_path / "pq", format="parquet").facts(subject=first.subject)


def test_cli_convert_to_duckdb_and_parquet(tmp_path: Path) -> None:
    _load_commands()
    runner = CliRunner()
    demo = load_demo_kg()
    src = tmp_path / "kg.tsv"
    src.write_text(
        "\n".join(
            f"{f.subject}\t{f.relation}\t{f.object}\t2015-03-0{i % 9 + 1}"
            for i, f in enumerate(list(demo)[:30])
        )
        + "\n"
    )
    out = runner.invoke(app, ["kg", "convert", str(src), str(tmp_path / "kg.duckdb")])
    assert out.exit_code == 0, out.output
    out = runner.invoke(
        app, ["kg", "convert", str(tmp_path / "kg.duckdb"), str(tmp_path / "pq"), "--to", "parquet"]
    )
    assert out.exit_code == 0, out.output
    assert list(load_kg(tmp_path / "pq")) == list(load_kg(src, cache=False))
    out = runner.invoke(app, ["kg", "info", str(tmp_path / "kg.duckdb"), "--json"])
    assert out.exit_code == 0 and '"duckdb"' in out.output, out.output
    again = runner.invoke(app, ["kg", "convert", str(src), str(tmp_path / "kg.duckdb")])
    assert again.exit_code == 2 and "already exists" in again.output


def test_the_service_is_the_one_writer_of_a_persistent_store(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="needs the [service] extra")
    from fastapi.testclient import TestClient

    from tkgqa.service import create_app
    from tkgqa.service.policy import ServiceSettings

    path = tmp_path / "served.duckdb"
    DuckDBStore.from_kg(load_demo_kg(), path).close()
    app_ = create_app(kg=str(path), llm="fake", settings=ServiceSettings(allow_append=True))
    with TestClient(app_) as client:
        res = client.post("/api/kg/facts", json={"lines": "Alice\tvisit\tFrance\t2031-01-05\n"})
        assert res.status_code == 200 and res.json()["added"] == 1, res.text
        served = app_.state.tkgqa.kg
        assert isinstance(served, DuckDBStore) and served.facts(subject="Alice") == [A2031]
    served.close()
    with DuckDBStore.open(path, read_only=True) as again:  # the append is on disk
        assert again.facts(subject="Alice") == [A2031] and len(again) == len(load_demo_kg()) + 1
    read_only_app = create_app(kg=str(path), llm="fake")  # appends off: the service opens it read-only
    assert read_only_app.state.tkgqa.kg._sh.read_only
    read_only_app.state.tkgqa.kg.close()


A2031 = pt("Alice", "visit", "France", "2031-01-05")


def test_cli_convert_into_a_folder_not_made_yet(tmp_path: Path) -> None:
    """``tkgqa kg convert KG runs/kg.duckdb`` in a fresh checkout: the folder is made (it was an error
    blaming another process)."""
    _load_commands()
    out = CliRunner().invoke(app, ["kg", "convert", "demo", str(tmp_path / "runs" / "new" / "kg.duckdb")])
    assert out.exit_code == 0, out.output
    assert len(load_kg(tmp_path / "runs" / "new" / "kg.duckdb")) == len(load_demo_kg())


def test_cli_convert_refuses_a_store_name_nothing_would_open_as_a_store(tmp_path: Path) -> None:
    """A DuckDB store written as ``kg.xyz`` was read back as a text KG ("not UTF-8 text"): the name is
    refused before anything is written, and a registered store suffix (``.ddb`` too) works."""
    _load_commands()
    runner = CliRunner()
    out = runner.invoke(app, ["kg", "convert", "demo", str(tmp_path / "kg.xyz")])
    assert out.exit_code == 2 and ".duckdb or .ddb" in out.output and "Traceback" not in out.output
    assert not list(tmp_path.iterdir())  # nothing written
    out = runner.invoke(app, ["kg", "convert", "demo", str(tmp_path / "kg.ddb")])
    assert out.exit_code == 0, out.output
    assert len(load_kg(tmp_path / "kg.ddb")) == len(load_demo_kg())
