"""Loaders for every KG format: parsing, sniffing, malformed input (strict and lenient), labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tkgqa.errors import ConfigError, DataError, NotFoundError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.kg.loaders import (
    LoadReport,
    load_demo_kg,
    load_icews_ids,
    load_kg,
    load_quadruples,
    load_table,
    load_timequestions,
    load_tsv,
    load_wikidata,
    read_id_map,
    read_labels,
    sniff_format,
)
from tkgqa.time import TimePoint

P = TimePoint.of


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


QUADS = (
    "Barack_Obama\tMake_a_visit\tJapan\t2014-11-10\n"
    "Citizen_(Thailand)\tReject\tThailand\t2005-01-01\n"
    "Barack_Obama\tMake_a_visit\tJapan\t2014-11-10\n"  # duplicate
)


def test_quadruples(tmp_path: Path) -> None:
    kg = load_quadruples(write(tmp_path / "kg.txt", QUADS))
    assert len(kg) == 2 and kg.name == "kg"
    assert kg.facts(subject="Barack_Obama") == [
        Fact("Barack_Obama", "Make_a_visit", "Japan", P("2014-11-10"), P("2014-11-10"))
    ]
    assert kg.label("Citizen_(Thailand)") == "Citizen (Thailand)"
    assert kg.load_report == LoadReport(str(tmp_path / "kg.txt"), "quadruples", 3, 2, 0, 1, ())


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("a\tb\tc\n", "expected 4 tab-separated columns, got 3"),
        ("a\tb\tc\t2015-13-01\n", "cannot parse time '2015-13-01'"),
        ("a\tb\tc\tyesterday\n", "cannot parse time"),
        ("\tb\tc\t2015-01-01\n", "empty subject"),
        ("a\tb\tc\t2015-01-01\textra\n", "got 5"),
    ],
)
def test_malformed_lines_report_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path / "bad.txt", QUADS + line)
    with pytest.raises(DataError, match=message) as info:
        load_quadruples(path, strict=True)
    assert info.value.path == str(path) and info.value.line == 4
    assert str(info.value).startswith(f"{path}:4: ")


def test_lenient_mode_skips_and_counts(tmp_path: Path) -> None:
    bad = "".join(f"a\tb\tc\tbad{i}\n" for i in range(12))
    path = write(tmp_path / "bad.txt", QUADS + bad + "x\ty\tz\t2015\n")
    kg = load_quadruples(path, strict=False)
    report = kg.load_report
    assert report is not None
    assert (report.n_lines, report.n_facts, report.n_skipped, report.n_duplicates) == (16, 3, 12, 1)
    assert len(report.first_errors) == 10
    assert report.first_errors[0].startswith(f"{path}:4: cannot parse time 'bad0'")
    assert kg.facts(subject="x")[0].start == P("2015")


def test_our_tsv_format(tmp_path: Path) -> None:
    text = (
        "# a comment\n"
        "\n"
        "Barack Obama\tposition held\tPresident\t2009-01-20\t2017-01-20\n"
        "Joe Biden\tposition held\tPresident\t2021-01\t2025\n"
        "Donald Trump\tposition held\tPresident\t2025-01-20\t\n"
        "Barack Obama\tMake a visit\tCuba\t2016-03-20\n"
        "X\tr\tY\t\t\n"
    )
    kg = load_tsv(write(tmp_path / "demo.tsv", text))
    assert len(kg) == 5
    trump = kg.facts(subject="Donald Trump")[0]
    assert trump.end is None and trump.start == P("2025-01-20")
    assert kg.facts(subject="Joe Biden")[0].start == TimePoint(2021, 1)
    visit = kg.facts(subject="Barack Obama", relation="Make a visit")[0]
    assert visit.is_point
    assert kg.facts(subject="X")[0].interval.span == Fact("X", "r", "Y").interval.span
    assert kg.facts(object="President", time="2030") == [trump]
    assert kg.load_report is not None and kg.load_report.n_lines == 5


def test_tsv_rejects_start_after_end(tmp_path: Path) -> None:
    path = write(tmp_path / "x.tsv", "a\tr\tb\t2010\t2005\n")
    with pytest.raises(DataError, match="start 2010 is after end 2005") as info:
        load_tsv(path, strict=True)
    assert info.value.line == 1


def test_wikidata_quintuples_with_label_files(tmp_path: Path) -> None:
    write(
        tmp_path / "full.txt",
        "Q76\tP39\tQ11696\t2009\t2017\nQ76\tP26\tQ13133\t1992\t2916\nQ1\tP31\tQ2\t1\t2916\n",
    )
    write(tmp_path / "wd_id2entity_text.txt", "Q76\tBarack Obama\nQ11696\tPresident of the United States\n")
    write(tmp_path / "wd_id2relation_text.txt", "P39\tposition held\n")
    kg = load_wikidata(tmp_path / "full.txt")
    assert kg.label("Q76") == "Barack Obama" and kg.label("P39") == "position held"
    assert kg.label("Q13133") == "Q13133"
    spouse = kg.facts(relation="P26")[0]
    assert (spouse.start, spouse.end) == (P("1992"), None)
    undated = kg.facts(subject="Q1")[0]
    assert undated.start is None and undated.end is None
    assert sniff_format(tmp_path / "full.txt") == "wikidata"
    assert load_kg(tmp_path / "full.txt", cache=False).label("Q76") == "Barack Obama"
    own = load_wikidata(tmp_path / "full.txt", labels={"Q76": "Obama"})
    assert own.label("Q76") == "Obama" and own.label("P39") == "P39"


def test_timequestions_header_format(tmp_path: Path) -> None:
    columns = (
        "split subject_id subject_label relation_id relation_label object_id object_label start_year end_year"
    )
    header = "\t".join(columns.split()) + "\n"
    rows = (
        "valid\tQ65850829\t\tP39\tposition held\tQ64461822\t\t1947\t1961\n"
        "valid\tQ1350330\tJack Metcalf\tP69\teducated at\tQ219563\tUniversity of Washington\t\t1966\n"
        "test\tQ1928599\t\tP495\tcountry of origin\tQ30\tUnited States of America\t\t\n"
    )
    path = write(tmp_path / "tkbc.tsv", header + rows)
    assert sniff_format(path) == "timequestions"
    kg = load_timequestions(path)
    assert len(kg) == 3
    assert kg.label("Q1350330") == "Jack Metcalf" and kg.label("P69") == "educated at"
    assert kg.label("Q65850829") == "Q65850829"
    metcalf = kg.facts(subject="Q1350330")[0]
    assert (metcalf.start, metcalf.end) == (None, P("1966"))
    bad = write(tmp_path / "bad.tsv", header + "valid\tQ1\t\tP1\n")
    with pytest.raises(DataError, match="expected 9 tab-separated columns") as info:
        load_timequestions(bad, strict=True)
    assert info.value.line == 2
    with pytest.raises(DataError, match="lacks column"):
        load_timequestions(write(tmp_path / "nohead.tsv", "subject_id\trelation_id\tobject_id\n"))


@pytest.mark.parametrize("as_json", [False, True])
def test_icews_id_files(tmp_path: Path, as_json: bool) -> None:
    ents, rels = {"China": 0, "Iran": 1, "Citizen_(Nigeria)": 2}, {"Make_statement": 0, "Consult": 1}
    if as_json:
        write(tmp_path / "entity2id.json", json.dumps(ents))
        write(tmp_path / "relation2id.json", json.dumps(rels))
    else:
        write(tmp_path / "entity2id.txt", "".join(f"{k}\t{v}\n" for k, v in ents.items()))
        write(tmp_path / "relation2id.txt", "".join(f"{k}\t{v}\n" for k, v in rels.items()))
    path = write(tmp_path / "train.txt", "0\t1\t1\t0\t0\n2\t0\t0\t1\t0\n1\t1\t0\t365\n")
    assert sniff_format(path) == "icews_ids"
    kg = load_icews_ids(path, base="2014-01-01", first_step=0)
    assert [f.start for f in kg] == [P("2014-01-01"), P("2014-01-02"), P("2015-01-01")]
    assert kg.facts(subject="China")[0].object == "Iran"
    hours = load_icews_ids(path, base="2014-01-01", first_step=1, step=24)
    assert hours.facts(subject="Iran")[0].start == P("2014-01-16")  # 2014-01-01 + (365 - 1) // 24 days
    with pytest.raises(ConfigError, match="base="):
        load_icews_ids(path)
    via_kg = load_kg(path, cache=False, base="2014-01-01")
    assert list(via_kg) == list(kg)


def test_icews_ts2id_and_bad_ids(tmp_path: Path) -> None:
    write(tmp_path / "entity2id.txt", "A\t0\nB\t1\n")
    write(tmp_path / "relation2id.txt", "r\t0\n")
    write(tmp_path / "ts2id.json", json.dumps({"2005-01-01": 0, "2005-01-02": 1}))
    path = write(tmp_path / "q.txt", "0\t0\t1\t1\n1\t0\t0\t7\n5\t0\t0\t0\n")
    with pytest.raises(DataError, match="time id 7 not in the ts2id map") as info:
        load_icews_ids(path, strict=True)
    assert info.value.line == 2
    kg = load_icews_ids(path, strict=False)
    assert [f.start for f in kg] == [P("2005-01-02")]
    assert kg.load_report is not None and kg.load_report.n_skipped == 2
    assert "id not in the entity/relation maps" in kg.load_report.first_errors[1]


def test_id_map_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="name<TAB>id") as info:
        read_id_map(write(tmp_path / "e.txt", "A\t0\nB\n"))
    assert info.value.line == 2
    with pytest.raises(DataError, match="JSON"):
        read_id_map(write(tmp_path / "e.json", "{oops"))
    assert read_id_map(write(tmp_path / "sp.txt", "Name with\ttab\t3\n")) == {3: "Name with\ttab"}


def test_csv_and_jsonl_tables(tmp_path: Path) -> None:
    csv_path = write(
        tmp_path / "kg.csv",
        "head,rel,tail,from,to\nA,visit,B,2015-03-21,2015-03-21\nA,member,C,2010,\n"
        '"D, Jr.",visit,B,2016,2016\n',
    )
    kg = load_table(csv_path, subject="head", relation="rel", object="tail", start="from", end="to")
    assert len(kg) == 3 and kg.facts(subject="A", relation="member")[0].end is None
    assert kg.has_entity("D, Jr.")
    with pytest.raises(DataError, match="lacks column"):
        load_table(csv_path)
    rows = [
        {"subject": "A", "relation": "visit", "object": "B", "start": "2015-03", "end": "2015-04"},
        {"subject": "A", "relation": "visit", "object": "C", "start": 2015},
        {"subject": "A", "relation": "joined", "object": "D", "start": "2001", "end": None},
    ]
    jl = write(tmp_path / "kg.jsonl", "".join(json.dumps(r) + "\n" for r in rows) + "[1]\n")
    with pytest.raises(DataError, match="JSON object") as info:
        load_table(jl, strict=True)
    assert info.value.line == 4
    kg = load_table(jl, strict=False)
    assert [f.end for f in kg] == [P("2015-04"), P("2015"), None]
    assert load_kg(jl, cache=False, strict=False).load_report.format == "jsonl"  # type: ignore[union-attr]
    tsv = write(tmp_path / "t.txt", "subject\trelation\tobject\tstart\nA\tr\tB\t2001\n")
    assert sniff_format(tsv) == "csv" and len(load_kg(tsv, cache=False)) == 1


def test_sniffing_and_dispatch(tmp_path: Path) -> None:
    assert sniff_format(write(tmp_path / "q.txt", QUADS)) == "quadruples"
    assert sniff_format(write(tmp_path / "t.tsv", "a\tr\tb\t2001\t2002\nc\tr\td\t2003\n")) == "tsv"
    with pytest.raises(DataError, match="cannot detect"):
        sniff_format(write(tmp_path / "w.txt", "just some words\n"))
    with pytest.raises(DataError, match="no data lines"):
        sniff_format(write(tmp_path / "e.txt", "# only a comment\n"))
    with pytest.raises(ConfigError, match="unknown KG format"):
        load_kg(tmp_path / "q.txt", format="graphml")
    with pytest.raises(NotFoundError, match="does not exist"):
        load_kg(tmp_path / "missing.txt")
    with pytest.raises(DataError, match="directory"):
        load_kg(tmp_path)
    kg = load_kg(tmp_path / "q.txt", format="icews", cache=False)
    assert kg.load_report is not None and kg.load_report.format == "quadruples"
    (tmp_path / "latin1.txt").write_bytes("a\tr\tb\t2001\nc\xe9\tr\tb\t2001\n".encode("latin-1"))
    with pytest.raises(DataError, match="UTF-8"):
        load_kg(tmp_path / "latin1.txt", format="quadruples", cache=False)


def test_labels_argument(tmp_path: Path) -> None:
    path = write(tmp_path / "q.txt", QUADS)
    labels = write(tmp_path / "labels.txt", "Japan\tNippon\n")
    assert load_kg(path, labels=labels, cache=False).label("Japan") == "Nippon"
    assert load_kg(path, labels={"Japan": "JP"}, cache=False).label("Japan") == "JP"
    assert read_labels([labels]) == {"Japan": "Nippon"}
    with pytest.raises(DataError, match="id<TAB>label"):
        read_labels(write(tmp_path / "bad_labels.txt", "nolabel\n"))


def test_demo_kg(demo_kg: TemporalKG) -> None:
    assert demo_kg.name == "demo" and len(demo_kg) >= 300
    assert demo_kg.load_report is not None and demo_kg.load_report.n_skipped == 0
    assert load_kg("demo").name == "demo"
    first, last = demo_kg.time_span()
    assert first is not None and last is not None and first < last
    assert any(f.end is None for f in demo_kg)  # ongoing facts
    assert len(load_demo_kg()) == len(demo_kg)
