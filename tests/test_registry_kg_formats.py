"""KG file formats are a registry: one registration per format, ``load_kg`` dispatches through it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tkgqa.errors import ConfigError, DataError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.kg.formats import KG_FORMATS, KGFormat, format_names, get_format, register_format, sniff_format
from tkgqa.kg.loaders import load_kg, source_files
from tkgqa.time import parse_time

BUILTIN = {"quadruples", "icews_ids", "wikidata", "timequestions", "tsv", "csv", "jsonl"}


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made by a test are undone afterwards."""
    KG_FORMATS.names()  # entry points read into the originals before they are copied
    monkeypatch.setattr(KG_FORMATS, "_factories", dict(KG_FORMATS._factories))
    monkeypatch.setattr(KG_FORMATS, "_order", dict(KG_FORMATS._order))
    monkeypatch.setattr(KG_FORMATS, "_lazy", dict(KG_FORMATS._lazy))  # plugins imported here: forgotten


def load_semicolon(
    path: str | os.PathLike[str], *, strict: bool = True, labels: Any = None, **options: Any
) -> TemporalKG:
    facts = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        s, r, o, t = line.split(";")
        facts.append(Fact(s, r, o, parse_time(t), parse_time(t)))
    return TemporalKG(facts, name=Path(path).stem)


def is_semicolon(head: Sequence[str]) -> bool:
    return all(line.count(";") == 3 for line in head)


def test_one_registration_adds_a_format(tmp_path: Path, scratch_registry: None) -> None:
    register_format(
        KGFormat("semicolon", load_semicolon, suffixes=(".scsv",), aliases=("sc",), detect=is_semicolon)
    )
    assert "semicolon" in format_names() and "sc" not in format_names()
    by_suffix = tmp_path / "kg.scsv"
    by_suffix.write_text("Ann;meet;Bob;2001\nBob;meet;Cy;2002-05\n", "utf-8")
    assert sniff_format(by_suffix) == "semicolon"
    kg = load_kg(by_suffix)
    assert len(kg) == 2 and kg.load_report is not None and kg.load_report.format == "semicolon"
    again = load_kg(by_suffix)  # through the binary cache
    assert len(again) == 2 and again.load_report is not None and again.load_report.from_cache
    by_content = tmp_path / "kg.txt"
    by_content.write_text("Ann;meet;Bob;2001\n", "utf-8")
    assert sniff_format(by_content) == "semicolon"  # detected (priority 50, before the catch-alls)
    assert len(load_kg(by_content, format="sc", cache=False)) == 1  # an alias


def test_builtin_formats_are_registered_once_each() -> None:
    names = set(format_names())
    assert names >= BUILTIN and not {"icews", "multitq", "cronquestions", "quintuples"} & names
    assert get_format("icews") is get_format("multitq") is get_format("quadruples")
    assert get_format("cronquestions").name == "wikidata"
    assert get_format("csv").suffixes == (".csv",)


def test_unknown_format_lists_the_registered_ones(tmp_path: Path) -> None:
    path = tmp_path / "kg.tsv"
    path.write_text("a\tr\tb\t2001\n", "utf-8")
    with pytest.raises(
        ConfigError, match=r"unknown KG format 'graphml'; use auto or one of .*quadruples.*tsv"
    ):
        load_kg(path, format="graphml")
    bad = tmp_path / "odd.txt"
    bad.write_text("one two\n", "utf-8")
    with pytest.raises(DataError, match=r"cannot detect the KG format.*--format NAME, one of"):
        sniff_format(bad)


def test_aux_files_enter_the_cache_key(tmp_path: Path) -> None:
    kg = tmp_path / "full.txt"
    kg.write_text("Q1\tP1\tQ2\t2001\t2002\n", "utf-8")
    labels = tmp_path / "wd_id2entity_text.txt"
    labels.write_text("Q1\tOne\n", "utf-8")
    assert source_files(kg, "wikidata") == [kg, labels]
    assert source_files(kg, "quadruples") == [kg]
