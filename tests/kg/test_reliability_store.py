"""Reliability round 3 (issue #23), the stores: a refused or interrupted DuckDB append keeps nothing (one
transaction of any size, the vocabulary moved only on commit); the in-memory store's compaction is safe for
readers on other threads; time arguments of ``as_of``/``known_at`` are typed (clear errors, never an
AttributeError/OverflowError); every store applies the one names rule of :mod:`tkgqa.kg.validate`."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from tkgqa.errors import ConfigError, DataError, TKGQAError
from tkgqa.kg import Fact, TemporalKG, memory
from tkgqa.kg.reference import ListStore
from tkgqa.time import TimePoint

P = TimePoint.of


def pt(s: str, r: str, o: str, when: str) -> Fact:
    return Fact(s, r, o, P(when), P(when))


def _duckdb() -> Any:
    pytest.importorskip("duckdb", reason="needs the [store] extra (duckdb, pyarrow)")
    pytest.importorskip("pyarrow", reason="needs the [store] extra (duckdb, pyarrow)")
    from tkgqa.kg.duckdb_store import DuckDBStore

    return DuckDBStore


# --- item 2: a refused DuckDB append keeps nothing -----------------------------------------------------
@pytest.mark.parametrize("bad_at", ["history", "not-a-date"])
def test_a_refused_duckdb_append_leaves_the_store_exactly_as_before(tmp_path: Path, bad_at: str) -> None:
    store_cls = _duckdb()
    path = tmp_path / "s.duckdb"
    store = store_cls.open(path)
    store.append([pt("Alice", "met", "Bob", "2015")], at=datetime(2026, 1, 2, tzinfo=UTC))
    before = (list(store.entities), list(store.relations), list(store), store.last_transaction)
    at: Any = datetime(2026, 1, 1, tzinfo=UTC) if bad_at == "history" else "not-a-date"
    with pytest.raises(ConfigError):
        store.append([pt("Xavier", "likes", "Yvonne", "2016")], at=at)  # new names, refused
    assert (list(store.entities), list(store.relations), list(store), store.last_transaction) == before
    assert not store.has_entity("Xavier") and not store.has_relation("likes")
    store.append([pt("Carol", "met", "Dave", "2017")])  # the next append gets the next ids
    store.close()
    with store_cls.open(path, read_only=True) as again:  # what is on disk agrees: no id shifted
        facts = list(again)
        assert facts == [pt("Alice", "met", "Bob", "2015"), pt("Carol", "met", "Dave", "2017")]
        assert again.facts(subject="Carol") == [pt("Carol", "met", "Dave", "2017")]
        assert again.facts(subject="Dave") == [] and list(again.entities) == ["Alice", "Bob", "Carol", "Dave"]


def test_one_append_is_one_transaction_whatever_its_size(tmp_path: Path) -> None:
    """The facts of one append() are staged in chunks but committed once: an error after the last chunk
    (here the iterable raising at its end, with chunks of 7 facts) keeps none, on disk or in memory."""
    store_cls = _duckdb()
    from tkgqa.kg import duckdb_write

    path = tmp_path / "big.duckdb"
    store = store_cls.open(path)
    store.append([pt("Root", "is", "here", "2000")])

    def facts_then_failure() -> Iterator[Fact]:
        for i in range(100):
            yield pt(f"E{i}", f"r{i % 3}", f"F{i}", "2015")
        raise RuntimeError("the writer died after the last fact")

    original = duckdb_write.CHUNK
    duckdb_write.CHUNK = 7  # many chunks; before the fix each 4 x BATCH facts committed on its own
    try:
        with pytest.raises(RuntimeError):
            store.append(facts_then_failure())
    finally:
        duckdb_write.CHUNK = original
    assert len(store) == 1 and list(store.entities) == ["Root", "here"]
    store.close()
    with store_cls.open(path, read_only=True) as again:
        assert len(again) == 1 and list(again.entities) == ["Root", "here"]
    with store_cls.open(path) as writer:  # and a complete append of many chunks lands whole
        duckdb_write.CHUNK = 7
        try:
            assert writer.append(pt(f"E{i}", "r", f"F{i}", "2015") for i in range(50)) == 50
        finally:
            duckdb_write.CHUNK = original
        assert len(writer) == 51 and writer.facts(subject="E49") == [pt("E49", "r", "F49", "2015")]


def test_a_bad_name_in_an_append_keeps_nothing(tmp_path: Path) -> None:
    store_cls = _duckdb()
    store = store_cls.open(tmp_path / "n.duckdb")
    with pytest.raises(DataError, match="U\\+200B"):
        store.append([pt("Ann", "met", "Ben", "2015"), pt("Barack\u200bObama", "met", "Ben", "2015")])
    assert len(store) == 0 and list(store.entities) == []
    store.close()


# --- item 7: compaction during appends is safe for readers ---------------------------------------------
def test_readers_never_see_a_half_compacted_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """An appender whose appends compact (the delta folded into the columns) while readers query: no
    IndexError, and no read returns fewer facts than an earlier read of the same reader."""
    monkeypatch.setattr(memory, "COMPACT_AFTER", 5_000)  # compactions at a tenth of the real bound's size
    kg = TemporalKG([pt("Hub", "r", f"E{i}", "2015-01-01") for i in range(2000)])
    compactions: list[int] = []
    compact = kg.compact
    monkeypatch.setattr(kg, "compact", lambda: (compactions.append(len(kg)), compact())[1])
    stop = threading.Event()
    errors: list[BaseException] = []
    shrunk: list[tuple[int, int]] = []

    def read() -> None:
        last = 0
        try:
            while not stop.is_set():
                n = len(kg.facts(subject="Hub")) + 0 * len(kg.incident("Hub")) + 0 * kg.count(relation="r")
                if n < last:
                    shrunk.append((last, n))
                last = n
                kg.hop("Hub", max_neighbors=3)
                kg.time_span("Hub")
        except BaseException as exc:
            errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in readers:
        t.start()
    try:
        for i in range(2000, 2000 + 16_000, 500):  # over the 5,000-fact delta bound: compactions happen
            kg.add(pt("Hub", "r", f"E{j}", "2015-01-02") for j in range(i, i + 500))
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert not errors, errors[:3]
    assert not shrunk, shrunk[:3]
    assert len(kg.facts(subject="Hub")) == 18_000
    assert len(compactions) >= 2  # the readers met compactions in flight (5,500 then 11,000 appended facts)


# --- item 7: typed time arguments ------------------------------------------------------------------------
def _stores() -> list[Any]:
    facts = [Fact("A", "r", "B", P("2010"), P("2020")), pt("C", "r", "D", "2016")]
    stores: list[Any] = [TemporalKG(facts), ListStore(facts), TemporalKG(facts).as_of("2030")]
    with contextlib.suppress(pytest.skip.Exception):  # without the [store] extra: the other stores
        stores.append(_duckdb()(facts))
    return stores


@pytest.mark.parametrize("bad", [1.5, None, True, 10**30, -(10**30), [2015], object()])
def test_as_of_refuses_what_is_not_a_time_with_a_clear_error(bad: Any) -> None:
    for store in _stores():
        with pytest.raises(DataError, match=r"a time must be|out of range"):
            store.as_of(bad)


def test_as_of_takes_a_year_int_a_date_and_text_alike() -> None:
    for store in _stores():
        by_int, by_text, by_date = store.as_of(2015), store.as_of("2015"), store.as_of(date(2015, 1, 1))
        assert list(by_int) == list(by_text) == list(by_date)
        assert [f.subject for f in by_int] == ["A"] and by_int.facts()[0].end is None  # clipped at 2015


@pytest.mark.parametrize("bad", [1.5, None, True, 10**30, -(10**30), "not-a-date", [1]])
def test_known_at_refuses_what_is_not_a_transaction_time(bad: Any) -> None:
    store = _duckdb()([pt("A", "r", "B", "2015")])
    with pytest.raises(ConfigError, match="transaction time"):
        store.known_at(bad)
    if bad is not None:  # append(at=None) is "now"
        with pytest.raises(ConfigError, match="transaction time"):
            store.append([pt("C", "r", "D", "2015")], at=bad)
    assert len(store) == 1


def test_known_at_takes_a_date_as_its_midnight_utc() -> None:
    store = _duckdb()()
    store.append([pt("A", "r", "B", "2015")], at=datetime(2026, 3, 1, 12, tzinfo=UTC))
    assert list(store.known_at(date(2026, 3, 1))) == []
    assert len(store.known_at(date(2026, 3, 2))) == 1


# --- item 8: one names rule in every store --------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["Barack\u200bObama", "A\u2028B", "tab\there", "bell\x07", "\ufeffBOM", "", "   ", "x" * 1001]
)
def test_every_store_refuses_a_name_breaking_the_rule(name: str) -> None:
    for store in _stores()[:2] + _stores()[3:]:
        with pytest.raises(TKGQAError):
            store.add([pt(name, "r", "B", "2015")])
        assert not store.has_entity(name)


def test_a_name_not_in_nfc_is_refused_by_stores_and_normalised_by_loaders(tmp_path: Path) -> None:
    from tkgqa.kg import load_kg

    decomposed = "Jose\u0301"  # J o s e + combining acute: NFC is "José"
    with pytest.raises(DataError, match="NFC"):
        TemporalKG([pt(decomposed, "r", "B", "2015")])
    path = tmp_path / "kg.tsv"
    path.write_text(f"{decomposed}\tr\tB\t2015\nJos\u00e9\tr\tC\t2016\n", encoding="utf-8")
    kg = load_kg(path, cache=False)
    assert list(kg.entities).count("Jos\u00e9") == 1 and len(kg.facts(subject="Jos\u00e9")) == 2
