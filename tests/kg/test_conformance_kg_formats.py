"""Conformance suite of the KG formats (:data:`~tkgqa.kg.formats.KG_FORMATS`), over every registered format
(built-ins and plugins such as ``pipe``).

Every format must: be registered under a lower-case name (its aliases resolving to it) with lower-case
dotted suffixes; have a ``detect`` that never raises on arbitrary lines; report a missing file as
NotFoundError and junk as a project error (never a bare exception); and, where the test knows how to write
the format, load the demo facts back unchanged (also when ``auto`` sniffs the format from the file).
"""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.errors import NotFoundError, TKGQAError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.kg.formats import KG_FORMATS, KGFormat, all_formats, directory_format, get_format, sniff_format
from tkgqa.kg.loaders import load_demo_kg, load_kg

FORMATS = all_formats()
IDS = [f.name for f in FORMATS]
FILE_FORMATS = [f for f in FORMATS if not f.directory]


def _facts() -> list[Fact]:
    """Demo facts with day-precise point times (every format can hold them), plus open-ended ones."""
    facts = list(load_demo_kg().facts())
    points = [f for f in facts if f.is_point and f.start is not None and len(f.start.iso()) == 10]
    return points[:25]


FACTS = _facts()


def _row(f: Fact) -> tuple[str, str, str, str, str]:
    d = f.to_dict()
    return d["subject"], d["relation"], d["object"], d["start"] or "", d["end"] or ""


def write_tsv(path: Path) -> Path:
    path.write_text("".join("\t".join(_row(f)) + "\n" for f in FACTS), encoding="utf-8")
    return path


def write_quadruples(path: Path) -> Path:
    path.write_text("".join("\t".join(_row(f)[:4]) + "\n" for f in FACTS), encoding="utf-8")
    return path


def write_csv(path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["subject", "relation", "object", "start", "end"])
        w.writerows(_row(f) for f in FACTS)
    return path


def write_jsonl(path: Path) -> Path:
    path.write_text("".join(json.dumps(f.to_dict()) + "\n" for f in FACTS), encoding="utf-8")
    return path


def write_pipe(path: Path) -> Path:
    path.write_text("".join("|".join(_row(f)) + "\n" for f in FACTS), encoding="utf-8")
    return path


def write_duckdb(path: Path) -> Path:
    from tkgqa.kg.duckdb_store import DuckDBStore

    store = DuckDBStore.from_kg(TemporalKG(FACTS, name="conf"), path)
    store.close()
    return path


def write_parquet(path: Path) -> Path:
    from tkgqa.kg.duckdb_io import export_parquet
    from tkgqa.kg.duckdb_store import DuckDBStore

    store = DuckDBStore.from_kg(TemporalKG(FACTS, name="conf"), path.with_suffix(".duckdb"))
    out = export_parquet(store, path)
    store.close()
    return out


#: format → (file name, writer); formats not listed here are checked by the generic tests only
WRITERS: dict[str, tuple[str, Callable[[Path], Path]]] = {
    "tsv": ("kg.txt", write_tsv),
    "quadruples": ("kg.txt", write_quadruples),
    "csv": ("kg.csv", write_csv),
    "jsonl": ("kg.jsonl", write_jsonl),
    "pipe": ("kg.pipe", write_pipe),
    "duckdb": ("kg.duckdb", write_duckdb),
    "parquet": ("kg_parquet", write_parquet),
}
EXTRAS = {"duckdb": "duckdb", "parquet": "duckdb"}


def _rows(kg: object) -> set[tuple[str, str, str, str, str]]:
    return {_row(f) for f in kg.facts()}  # type: ignore[attr-defined]


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_registration(fmt: KGFormat) -> None:
    assert fmt.name == fmt.name.strip().lower() and fmt.name
    assert callable(fmt.loader)
    assert all(s.startswith(".") and s == s.lower() for s in fmt.suffixes)
    assert get_format(fmt.name).name == fmt.name
    for alias in fmt.aliases:
        assert get_format(alias).name == fmt.name
    assert fmt.name in KG_FORMATS.names()


_LINE = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(["A", "r", "B", "2014-01-01", "12", "Q42", "{", '"s"', ":", ",", "|", "\t"]),
             max_size=8).map("".join),
)  # fmt: skip


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.detect is not None], ids=lambda f: f.name)
@settings(max_examples=60, deadline=None, database=None)
@given(head=st.lists(_LINE, max_size=5))
def test_detect_never_raises(fmt: KGFormat, head: list[str]) -> None:
    assert fmt.detect is not None
    assert isinstance(fmt.detect(head), bool)


@pytest.mark.parametrize("fmt", FILE_FORMATS, ids=lambda f: f.name)
def test_missing_file_is_not_found(fmt: KGFormat, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        load_kg(tmp_path / f"missing{(fmt.suffixes or ('.txt',))[0]}", format=fmt.name, cache=False)


@pytest.mark.parametrize("fmt", FILE_FORMATS, ids=lambda f: f.name)
@settings(
    max_examples=15, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=200))
def test_junk_raises_only_project_errors(
    fmt: KGFormat, tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    if fmt.name in EXTRAS:
        pytest.importorskip(EXTRAS[fmt.name])
    path = tmp_path_factory.mktemp("junk") / f"kg{(fmt.suffixes or ('.txt',))[0]}"
    path.write_bytes(data)
    with contextlib.suppress(TKGQAError):
        load_kg(path, format=fmt.name, cache=False)


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_round_trip_of_demo_facts(name: str, tmp_path: Path) -> None:
    if name not in IDS:
        pytest.skip(f"format {name!r} is not registered here (plugin not installed)")
    if name in EXTRAS:
        pytest.importorskip(EXTRAS[name])
    filename, write = WRITERS[name]
    path = write(tmp_path / filename)
    expected = {_row(f) for f in FACTS}
    assert _rows(load_kg(path, format=name, cache=False)) == expected
    fmt = get_format(name)
    if fmt.directory:
        found = directory_format("auto", path)
        assert found is not None and found.name == name
    else:
        assert sniff_format(path) == name
    assert _rows(load_kg(path, cache=False)) == expected
