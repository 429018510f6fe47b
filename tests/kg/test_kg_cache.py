"""The binary KG cache: hits, misses on changed bytes/options, corruption, location."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tkgqa.kg import Fact, TemporalKG
from tkgqa.kg.cache import cache_dir, cache_key, clear_cache, load_cached_kg, save_kg, tkgqa_home
from tkgqa.kg.core_files import is_mapped
from tkgqa.kg.loaders import load_kg
from tkgqa.time import TimePoint

QUADS = "A\tvisit\tB\t2015-03-21\nB\tvisit\tC\t2015-04-01\nC_(X)\tmeet\tA\t2014-01-01\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def kg_file(tmp_path: Path) -> Path:
    path = tmp_path / "kg.txt"
    path.write_text(QUADS, encoding="utf-8")
    return path


def entries() -> list[Path]:
    return sorted(p for p in cache_dir().glob("*") if p.is_dir() and p.name[0] != "." and p.name != "digests")


def test_session_home_is_isolated() -> None:
    home = Path(os.environ["TKGQA_HOME"])
    assert home != Path("~/.cache/tkgqa").expanduser()
    assert tkgqa_home() == home


def test_default_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TKGQA_HOME")
    assert tkgqa_home() == Path("~/.cache/tkgqa").expanduser()


def test_miss_then_hit(home: Path, kg_file: Path) -> None:
    cold = load_kg(kg_file)
    assert cold.load_report is not None and not cold.load_report.from_cache
    assert [p.parent for p in entries()] == [home / "kg_cache"]
    warm = load_kg(kg_file)
    assert warm.load_report is not None and warm.load_report.from_cache
    assert warm.load_report.n_facts == 3 and warm.load_report.format == "quadruples"
    assert list(warm) == list(cold)
    assert warm.name == "kg"
    assert warm.facts(subject="A", time="2015-03") == cold.facts(subject="A", time="2015-03")
    assert warm.label("C_(X)") == "C (X)"
    # The cached store still accepts appends.
    assert warm.add([Fact("A", "visit", "D", TimePoint(2016), TimePoint(2016))]) == 1
    assert warm.add([cold.facts(subject="A")[0]]) == 0


def test_key_covers_bytes_and_options(home: Path, kg_file: Path) -> None:
    load_kg(kg_file)
    load_kg(kg_file, strict=True)
    assert len(entries()) == 2
    kg_file.write_text(QUADS + "D\tvisit\tA\t2016-01-01\n", encoding="utf-8")
    changed = load_kg(kg_file)
    assert len(changed) == 4 and changed.load_report is not None and not changed.load_report.from_cache
    assert len(entries()) == 3
    assert cache_key([kg_file], {"a": 1}) != cache_key([kg_file], {"a": 2})
    assert cache_key([kg_file], {"a": 1}) == cache_key([kg_file], {"a": 1})


def test_labels_are_cached(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "wd.txt"
    path.write_text("Q76\tP39\tQ11696\t2009\t2017\n", encoding="utf-8")
    (tmp_path / "wd_id2entity_text.txt").write_text("Q76\tBarack Obama\n", encoding="utf-8")
    assert load_kg(path).label("Q76") == "Barack Obama"
    again = load_kg(path)
    assert again.load_report is not None and again.load_report.from_cache
    assert again.label("Q76") == "Barack Obama"
    (tmp_path / "wd_id2entity_text.txt").write_text("Q76\tObama\n", encoding="utf-8")
    assert load_kg(path).label("Q76") == "Obama"  # a label file is part of the key


@pytest.mark.parametrize("damage", ["truncate", "garbage", "no-manifest", "missing-array"])
def test_corrupt_entry_is_rebuilt_with_a_warning(home: Path, kg_file: Path, damage: str) -> None:
    load_kg(kg_file)
    (entry,) = entries()
    column, manifest = entry / "col_s.npy", entry / "manifest.json"
    if damage == "truncate":
        column.write_bytes(column.read_bytes()[:-4])
    elif damage == "garbage":
        manifest.write_bytes(b"not json" * 10)
    elif damage == "no-manifest":  # a write killed before its manifest: never opened
        manifest.unlink()
    else:
        (entry / "sr_ids.npy").unlink()
    with pytest.warns(RuntimeWarning, match="rebuilding the KG cache"):
        kg = load_kg(kg_file)
    assert len(kg) == 3
    assert load_kg(kg_file).load_report.from_cache  # type: ignore[union-attr]


def test_cached_store_is_memory_mapped(home: Path, kg_file: Path) -> None:
    load_kg(kg_file)
    warm = load_kg(kg_file)
    assert warm.load_report is not None and warm.load_report.from_cache
    assert is_mapped(warm.to_arrays()[3]["sr_ids"])  # no append: the core is the file


def test_save_and_load_directly(tmp_path: Path) -> None:
    kg = TemporalKG(
        [Fact("a", "r", "b", TimePoint(2015, 3), None), Fact("a", "r", "c")], labels={"a": "Alpha"}, name="x"
    )
    path = save_kg(kg, tmp_path / "x")
    back = load_cached_kg(path)
    assert list(back) == list(kg) and back.label("a") == "Alpha" and back.name == "x"
    assert back.load_report is None


def test_cache_disabled_writes_nothing(home: Path, kg_file: Path) -> None:
    load_kg(kg_file, cache=False)
    assert entries() == []
    load_kg(kg_file)
    assert clear_cache() == 1 and entries() == []
