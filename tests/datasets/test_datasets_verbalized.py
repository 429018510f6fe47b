"""Splitting verbalised facts "S rel O from Y1 to Y2." with relation labels."""

from __future__ import annotations

from tkgqa.datasets.verbalized import FactSplitter, read_label_file
from tkgqa.kg import Fact
from tkgqa.time import TimePoint

LABELS = ["position held", "head of government", "award received", "country", "capital"]


def test_longest_label_and_open_years() -> None:
    sp = FactSplitter(LABELS, include_extra=False)
    p = sp.parse("Jorge Luis Borges award received Jerusalem Prize from 1971 to 1971.")
    assert p.status == "ok" and p.fact == Fact(
        "Jorge Luis Borges", "award received", "Jerusalem Prize", TimePoint(1971), TimePoint(1971)
    )
    open_fact = sp.parse("Peru capital Lima from 1 to 2916.").fact
    assert open_fact is not None and (open_fact.start, open_fact.end) == (None, None)
    assert sp.split("A head of government country B") == ("A", "head of government", "country B")


def test_known_subject_beats_a_longer_label() -> None:
    sp = FactSplitter(LABELS, include_extra=False)
    text = "Adolphe Thiers position held head of government of France from 1848 to 1848."
    assert sp.parse(text).fact is not None
    assert sp.parse(text).fact.relation == "head of government"  # type: ignore[union-attr]
    facts = sp.parse_many([text, "Adolphe Thiers country France from 1 to 2916."])
    assert facts[0].fact is not None and facts[0].fact.subject == "Adolphe Thiers"
    assert facts[0].fact.object == "head of government of France"


def test_statuses() -> None:
    sp = FactSplitter(LABELS)
    assert sp.parse("Taraz population  from 1989 to 1989.").status == "no_object"
    assert sp.parse("Mexico zzz Spain from 1821 to 1821.").status == "unsplit"
    assert sp.parse("no time here").status == "no_time"
    rev = sp.parse("Amsterdam country Reichskommissariat Niederlande from 1945 to 1940.")
    assert rev.status == "reversed" and rev.fact is not None
    assert (rev.fact.start, rev.fact.end) == (TimePoint(1940), TimePoint(1945))
    # ARI prints facts without the final period
    assert sp.parse("Roberto Colombo country Italy from 1994 to 2000").status == "ok"


def test_weak_label_only_as_last_resort() -> None:
    sp = FactSplitter(LABELS)
    assert sp.split("Bao Dai of Vietnam") == ("Bao Dai", "of", "Vietnam")
    assert sp.split("Order of Lenin country Soviet Union") == ("Order of Lenin", "country", "Soviet Union")


def test_read_label_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "labels.txt"
    f.write_text("P1\tcountry\n\nP2\tcapital\n", "utf-8")
    assert read_label_file(f) == {"P1": "country", "P2": "capital"}
