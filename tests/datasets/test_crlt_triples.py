"""The CR-LT-KGQA ``KG Triples`` parser and the ``crlt`` KG format: items, repairs, qualifiers, typed date
literals, comma-containing relations and thousands separators; property tests on arbitrary input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.errors import DataError
from tkgqa.kg.crlt import (
    TripleProblem,
    parse_kg_triples,
    parse_time_literal,
    split_relation,
)
from tkgqa.kg.formats import sniff_format
from tkgqa.kg.loaders import load_kg
from tkgqa.time import TemporalRelation, TimePoint, holds


def test_numbered_items_and_thousands_separators() -> None:
    parsed = parse_kg_triples("1- (Horsens, population, 59,449), 2- (Ikast, population, 15,979)", "S1")
    assert [(i.number, i.head, i.relation, i.tail) for i in parsed.items] == [
        (1, "Horsens", "population", "59,449"),
        (2, "Ikast", "population", "15,979"),
    ]
    assert parsed.problems == ()
    assert [f.object for f in parsed.facts()] == ["59,449", "15,979"]


def test_comma_relations_and_tails_with_commas() -> None:
    text = (
        "1- (Czechoslovakia, dissolved, abolished or demolished date, 31 December 1992), "
        "2- (Juan Cuda, languages spoken, written or signed, Italian), "
        "3- (Inter Milan, description, association football club in Milan, Italy), "
        "4- (Naser al-Din Shah Qajar, spouse,Khazan al-Doulah)"
    )
    items = parse_kg_triples(text, "X").items
    assert [(i.relation, i.tail) for i in items] == [
        ("dissolved, abolished or demolished date", "31 December 1992"),
        ("languages spoken, written or signed", "Italian"),
        ("description", "association football club in Milan, Italy"),
        ("spouse", "Khazan al-Doulah"),
    ]


def test_date_tails_become_typed_literals() -> None:
    facts = parse_kg_triples(
        "1- (Andrea Mantovani, date of birth, 22 June 1984), 2- (Azadegan League, inception, 1991), "
        "3- (L'auberge du chien noir, number of episodes, 376), "
        "4- (Maria de Ventadorn, date of birth, 12. century)",
        "S",
    ).facts()
    birth, inception, episodes, century = facts
    assert birth.object == "1984-06-22" and birth.start == birth.end == TimePoint(1984, 6, 22)
    assert inception.start == TimePoint(1991)
    assert episodes.object == "376" and episodes.start is None  # a count, not a year
    assert (century.start, century.end) == (TimePoint(1101), TimePoint(1200))
    # usable by the one time semantics
    assert holds(TemporalRelation.BEFORE, birth.start, birth.end, TimePoint(1990))
    assert holds(TemporalRelation.IN, century.start, century.end, TimePoint(1150))


def test_time_qualifiers_give_intervals_one_fact_per_spell() -> None:
    text = (
        "1- (Vilnius, country, Soviet Union{start time, July 1944}{end time, 10 March 1990}), "
        "2- (Lokendra Bahadur Chand, position held, Prime Minister of Nepal {start time, 12 July 1983}"
        "{end time, 21 March 1986}{start time, 6 April 1990}{end time, 19 April 1990}), "
        "3- (Carmelo Buonocore, member of sports team, Inter Milan {start time: 1936, end time: 1945}), "
        "4- (Pietro Pasinati, occupation, association football player {end time, 1949}), "
        "5- (Zulfiqar Ali Bhutto, position held, president of Pakistan(start time, 20 December 1971))"
    )
    facts = parse_kg_triples(text, "S").facts()
    assert (facts[0].start, facts[0].end) == (TimePoint(1944, 7), TimePoint(1990, 3, 10))
    assert [(f.start, f.end) for f in facts[1:3]] == [
        (TimePoint(1983, 7, 12), TimePoint(1986, 3, 21)),
        (TimePoint(1990, 4, 6), TimePoint(1990, 4, 19)),
    ]
    assert (facts[3].start, facts[3].end) == (TimePoint(1936), TimePoint(1945))
    assert (facts[4].start, facts[4].end) == (None, TimePoint(1949))
    assert facts[5].object == "president of Pakistan" and facts[5].start == TimePoint(1971, 12, 20)
    assert facts[5].end is None


def test_other_qualifiers_are_kept_in_the_relation() -> None:
    text = (
        "1- (2022 South Korean presidential election, candidate, Yoon Suk Yeol {votes received, 16394815}"
        "{represents People Power Party}), 2- (Ulf Kristersson, position held, Prime Minister of Sweden, "
        "{replaces, Magdalena Andersson}), "
        "3- (Pinar Abay, position held, chief executive officer (of, ING Bank N.V.))"
    )
    facts = parse_kg_triples(text, "S").facts()
    assert facts[0].relation == "candidate {votes received: 16394815; represents: People Power Party}"
    assert facts[0].object == "Yoon Suk Yeol"
    base, quals = split_relation(facts[0].relation)
    assert base == "candidate" and [(q.key, q.value) for q in quals] == [
        ("votes received", "16394815"),
        ("represents", "People Power Party"),
    ]
    assert facts[1].relation == "position held {replaces: Magdalena Andersson}"
    assert facts[1].object == "Prime Minister of Sweden"
    assert facts[2].relation == "position held {of: ING Bank N.V.}"
    assert split_relation("occupation") == ("occupation", ())


def test_repairs_are_reported_with_the_entry_id() -> None:
    text = (
        "1- (2008 United States presidential election, candidate, Barack Obama {votes received, 69498516}, "
        "2-(2008 United States presidential election, candidate, John McCain {votes received, 59948323}), "
        "(Ismael Rodríguez, member of sports team, Querétaro F.C.), "
        "4- (Carmelo Buonocore, member of sports team, U.S. Palmese 1912 "
        "{start time: 1933, end time: 1934}]), "
        "5- (Lokendra Bahadur Chand, position held, Prime Minister of Nepal {start time, 12 July 1983}"
    )
    parsed = parse_kg_triples(text, "S7")
    assert [i.object if hasattr(i, "object") else i.tail for i in parsed.items] == [
        "Barack Obama",
        "John McCain",
        "Querétaro F.C.",
        "U.S. Palmese 1912",
        "Prime Minister of Nepal",
    ]
    messages = [str(p) for p in parsed.problems]
    assert any(m.startswith("S7 item 1: missing ')' (closed at the next numbered item)") for m in messages)
    assert any(m.startswith("S7 item 3: item without a number") for m in messages)
    assert any(m.startswith("S7 item 4: stray bracket removed") for m in messages)
    assert any(m.startswith("S7 item 5: missing ')' (closed at the end)") for m in messages)
    assert all(p.repaired for p in parsed.problems)


def test_unrecoverable_items_are_errors() -> None:
    parsed = parse_kg_triples("1- (only two, parts), junk text, 2- (A, r, B)", "C9")
    assert [i.head for i in parsed.items] == ["A"]
    errors = [p for p in parsed.problems if not p.repaired]
    assert {str(p).split(":")[0] for p in errors} == {"C9 item 1", "C9"}
    assert parse_kg_triples("", "C45").items == ()


@pytest.mark.parametrize(
    ("text", "year_ok", "expected"),
    [
        ("22 April 1982", False, (TimePoint(1982, 4, 22), TimePoint(1982, 4, 22))),
        ("June 22, 1984", False, (TimePoint(1984, 6, 22), TimePoint(1984, 6, 22))),
        ("July 1944", False, (TimePoint(1944, 7), TimePoint(1944, 7))),
        ("1923/06/25", False, (TimePoint(1923, 6, 25), TimePoint(1923, 6, 25))),
        ("0858", True, (TimePoint(858), TimePoint(858))),
        ("12. century", False, (TimePoint(1101), TimePoint(1200))),
        ("1st century", False, (TimePoint(1), TimePoint(100))),
        ("1991", False, None),  # a bare number needs a time-valued relation
        ("August 19", True, None),  # a day in the year, no year
        ("43 minute", True, None),
        ("31 February 1990", False, None),
    ],
)
def test_parse_time_literal(text: str, year_ok: bool, expected: tuple[TimePoint, TimePoint] | None) -> None:
    lit = parse_time_literal(text, year_ok=year_ok)
    assert (None if lit is None else (lit.start, lit.end)) == expected


_name = (
    st.text(
        alphabet=st.characters(blacklist_characters="(){},[]", blacklist_categories=("Cs", "Cc")),
        min_size=1,
        max_size=12,
    )
    .map(str.strip)
    .filter(lambda s: s and "," not in s and not s[0].isdigit())
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_name, _name, _name), min_size=1, max_size=6))
def test_well_formed_items_round_trip(triples: list[tuple[str, str, str]]) -> None:
    text = ", ".join(f"{n}- ({h}, {r}, {t})" for n, (h, r, t) in enumerate(triples, 1))
    parsed = parse_kg_triples(text, "H")
    assert [p for p in parsed.problems if not p.repaired] == []
    norm = [(" ".join(h.split()), " ".join(r.split()), " ".join(t.split())) for h, r, t in triples]
    got = [(i.head, i.relation, i.tail) for i in parsed.items]
    # the parser lower-cases a capitalised relation's first letter ("Date of death")
    assert [(h, t) for h, _, t in got] == [(h, t) for h, _, t in norm]
    assert [r.lower() for _, r, _ in got] == [r.lower() for _, r, _ in norm]


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_parser_never_raises_on_arbitrary_text(text: str) -> None:
    parsed = parse_kg_triples(text, "Z")
    assert all(isinstance(p, TripleProblem) for p in parsed.problems)
    for item in parsed.items:
        item.facts()  # never raises either


def _write(path: Path, entries: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps(entries, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


ENTRIES = [
    {
        "id": "S1",
        "query": "Is Horsens bigger than Ikast?",
        "answer": True,
        "KG Entities": {"Horsens": "Q1", "Ikast": "Q2"},
        "Inference Rule": "A city with more people is bigger.",
        "KG Triples": "1- (Horsens, population, 59,449), 2- (Ikast, population, 15,979)",
        "Reasoning Steps": [
            {"Step": "Horsens has 59,449 people.", "facts used in this step": "(Horsens, population, 59,449)"}
        ],
        "Reasoning Strategy": ["number comparison"],
    },
    {
        "id": "S2",
        "query": "Was Andrea Mantovani born before 1990?",
        "answer": True,
        "KG Entities": {"Andrea Mantovani": "Q3"},
        "Inference Rule": "r",
        "KG Triples": "1- (Andrea Mantovani, date of birth, 22 June 1984",
        "Reasoning Steps": [],
        "Reasoning Strategy": ["temporal reasoning"],
    },
]


def test_the_file_is_a_kg_format(tmp_path: Path) -> None:
    path = _write(tmp_path / "CR-LT-QA.json", ENTRIES)
    assert sniff_format(path) == "crlt"
    kg = load_kg(path)
    assert len(kg) == 3 and kg.has_entity("Horsens")
    assert kg.label("1984-06-22") == "22 June 1984"
    report = kg.load_report
    assert report is not None and report.format == "crlt" and report.n_facts == 3
    assert any(e.startswith("S2 item 1: missing ')'") for e in report.first_errors)
    again = load_kg(path)  # through the binary cache: same facts and labels
    assert again.load_report is not None and again.load_report.from_cache
    assert sorted(map(str, again)) == sorted(map(str, kg)) and again.label("1984-06-22") == "22 June 1984"


def test_strict_loading_rejects_a_broken_item(tmp_path: Path) -> None:
    bad = [{**ENTRIES[0], "KG Triples": "1- (Horsens, population)"}]
    path = _write(tmp_path / "bad.json", bad)
    with pytest.raises(DataError, match=r"S1 item 1: not a \(head, relation, tail\) triple"):
        load_kg(path, format="crlt", cache=False, strict=True)
    # lenient, a file whose every item is broken is still an error: a KG of 0 facts is never what was meant
    with pytest.raises(
        DataError, match=r"no fact could be read as crlt: its one entry was malformed \(first: S1"
    ):
        load_kg(path, format="crlt", strict=False, cache=False)
    bad.append(ENTRIES[0])  # one readable entry: the broken one is skipped and counted
    kg = load_kg(_write(tmp_path / "half.json", bad), format="crlt", strict=False, cache=False)
    assert len(kg) > 0 and kg.load_report is not None and kg.load_report.n_skipped == 1


def test_not_a_list_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"KG Triples": "1- (a, b, c)"}', encoding="utf-8")
    with pytest.raises(DataError, match="JSON list"):
        load_kg(path, format="crlt", cache=False)


@pytest.mark.slow
def test_shared_files_load_with_their_repairs_reported(shared_data: Path) -> None:
    qa = load_kg(shared_data / "crlt_kgqa" / "CR-LT-QA.json", cache=False)
    claims = load_kg(shared_data / "crlt_kgqa" / "CR-LT-ClaimVerification.json", cache=False)
    assert len(qa) > 300 and len(claims) > 100
    assert qa.load_report is not None and qa.load_report.n_skipped == 0
    assert any(e.startswith("S7 item 1: missing ')'") for e in qa.load_report.first_errors)
    assert qa.has_entity("Horsens") and claims.has_entity("Jordan Motor Car Company")
