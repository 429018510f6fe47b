"""The real benchmark KG files (skipped when ../shared/data is absent)."""

from __future__ import annotations

from pathlib import Path

from tkgqa.kg import get_first, get_tail_entity
from tkgqa.kg.linking import EntityLinker
from tkgqa.kg.loaders import load_kg, read_labels, sniff_format
from tkgqa.kg.neighborhood import entity_lifetime, relations_by_hop
from tkgqa.time import TimePoint


def test_multitq_full_partial(shared_data: Path) -> None:
    path = shared_data / "multitq" / "kg" / "full_partial.txt"
    assert sniff_format(path) == "quadruples"
    kg = load_kg(path)
    assert (len(kg), len(kg.entities), len(kg.relations)) == (227_030, 8_412, 237)
    assert kg.time_span() == (TimePoint(2005, 1, 1), TimePoint(2015, 12, 31))
    report = kg.load_report
    assert report is not None and report.n_skipped == 0 and report.n_lines == 227_030
    visits = get_tail_entity(kg, "Barack_Obama", "Make_a_visit", "2015-03")
    assert visits and all(f.start is not None and f.start.month == 3 for f in visits)
    assert get_first(visits)[0].start == min(f.start for f in visits if f.start)
    assert kg.label("Citizen_(Thailand)") == "Citizen (Thailand)"
    assert entity_lifetime(kg, "Barack_Obama").n_facts > 1000
    assert len(relations_by_hop(kg, "Thailand", 2)[1]) > 50
    cached = load_kg(path)
    assert cached.load_report is not None and cached.load_report.from_cache
    assert cached.facts(subject="Barack_Obama", time="2015-03") == kg.facts(
        subject="Barack_Obama", time="2015-03"
    )


def test_461k_store_loads_again_from_its_cache(shared_data: Path, tmp_path: Path) -> None:
    """ICEWS05-15 size: the 227k MultiTQ facts plus the same facts 20 years later."""
    source = (shared_data / "multitq" / "kg" / "full_partial.txt").read_text(encoding="utf-8")
    shifted = "".join(
        f"{line[:-10]}{int(line[-10:-6]) + 20}{line[-6:]}\n"
        for line in source.splitlines()
        if "-02-29" not in line
    )
    path = tmp_path / "doubled.txt"
    path.write_text(source + shifted, encoding="utf-8")
    kg = load_kg(path)
    assert len(kg) > 450_000
    again = load_kg(path)
    assert again.load_report is not None and again.load_report.from_cache
    assert len(again) == len(kg)
    assert again.time_span() == kg.time_span()


def test_icews14(shared_data: Path) -> None:
    kg = load_kg(shared_data / "icews14" / "full.txt")
    assert (len(kg), len(kg.entities), len(kg.relations)) == (90_730, 7_128, 230)
    assert kg.time_span() == (TimePoint(2014, 1, 1), TimePoint(2014, 12, 31))


def test_timequestions_tkbc_facts(shared_data: Path) -> None:
    path = shared_data / "timequestions" / "kg" / "tkbc_valid_test_facts.tsv"
    assert sniff_format(path) == "timequestions"
    kg = load_kg(path)
    assert len(kg) == 9_995
    assert kg.label("Q298761") == "Clive Barker" and kg.label("P39") == "position held"
    (metcalf,) = kg.facts(subject="Q1350330", relation="P69")
    assert (metcalf.start, metcalf.end) == (None, TimePoint(1966))


def test_cronquestions_labels_link(shared_data: Path) -> None:
    folder = shared_data / "cronquestions" / "kg"
    labels = read_labels(folder / "wd_id2entity_text.txt")
    assert len(labels) == 125_726
    linker = EntityLinker(labels, labels)
    assert linker.resolve("Barack Obama") == "Q76"
    assert linker.link("Barak Obama")[0].name == "Q76"
    relations = read_labels(folder / "wd_id2relation_text.txt")
    assert relations["P39"] == "position held" and len(relations) == 203
