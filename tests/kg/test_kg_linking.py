"""Entity and relation linking: normalisation, exact, alias and fuzzy matches, resolve errors."""

from __future__ import annotations

import pytest

from tkgqa.errors import NotFoundError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.kg.linking import Candidate, EntityLinker, RelationLinker, normalize

NAMES = [
    "Barack_Obama",
    "Barack_Obama_Sr.",
    "Citizen_(Thailand)",
    "Thailand",
    "Găgăuzia",
    "Lawyer/Attorney_(Germany)",
    "Xi_Jinping",
    "AT&T",
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Citizen_(Thailand)", "citizen thailand"),
        ("  Barack   OBAMA ", "barack obama"),
        ("Găgăuzia", "gagauzia"),
        ("Lawyer/Attorney_(Germany)", "lawyer attorney germany"),
        ("Illegal_Immigrant_(Xinjiang\u00a0Uyghur)", "illegal immigrant xinjiang uyghur"),
        ("Straße", "strasse"),
        ("AT&T", "at t"),
        ("", ""),
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.fixture
def linker() -> EntityLinker:
    return EntityLinker(
        NAMES, labels={"Xi_Jinping": "Xi Jinping (President)"}, aliases={"POTUS 44": "Barack_Obama"}
    )


def test_exact_matches(linker: EntityLinker) -> None:
    assert linker.link("Barack_Obama") == [Candidate("Barack_Obama", "Barack Obama", 1.0, "exact")]
    assert linker.link("barack obama")[0].name == "Barack_Obama"
    assert linker.link("citizen (thailand)")[0].name == "Citizen_(Thailand)"
    assert linker.link("Gagauzia")[0].name == "Găgăuzia"
    assert linker.link("xi jinping president")[0].name == "Xi_Jinping"  # via its label
    assert "Thailand" in linker and "Nowhere" not in linker and len(linker) == len(NAMES)


def test_alias(linker: EntityLinker) -> None:
    assert linker.link("potus-44") == [Candidate("Barack_Obama", "Barack Obama", 1.0, "alias")]
    assert linker.resolve("POTUS 44") == "Barack_Obama"


def test_fuzzy_ranking(linker: EntityLinker) -> None:
    got = linker.link("Barak Obama")
    assert [c.method for c in got] == ["fuzzy"] * len(got)
    assert got[0].name == "Barack_Obama" and got[1].name == "Barack_Obama_Sr."
    assert 0.9 < got[0].score < 1.0 and got[0].score > got[1].score
    assert linker.link("thailand citizen")[0].name == "Citizen_(Thailand)"
    assert linker.link("Barak Obama", fuzzy=False) == []
    assert linker.link("zzzzqqq") == []


def test_resolve(linker: EntityLinker) -> None:
    assert linker.resolve("Thailand") == "Thailand"
    assert linker.resolve("Xi Jinpin") == "Xi_Jinping"  # one clear fuzzy winner above the threshold
    with pytest.raises(NotFoundError, match="did you mean: 'Barack_Obama'") as info:
        linker.resolve("Barak Obamma", fuzzy_threshold=0.99)
    assert info.value.suggestions[:2] == ["Barack_Obama", "Barack_Obama_Sr."]
    with pytest.raises(NotFoundError, match="entity 'qqqq' not found"):
        linker.resolve("qqqq")


def test_wikidata_ids_and_labels() -> None:
    kg = TemporalKG([Fact("Q76", "P39", "Q11696")], labels={"Q76": "Barack Obama", "P39": "position held"})
    entities, relations = EntityLinker.from_kg(kg), RelationLinker.from_kg(kg)
    assert entities.resolve("barack obama") == "Q76" and entities.resolve("Q76") == "Q76"
    assert relations.resolve("Position held") == "P39"
    assert str(entities.link("Barack Obama")[0]) == "Q76 (Barack Obama)"
    with pytest.raises(NotFoundError, match="relation 'spouse' not found"):
        relations.resolve("spouse")


def test_relation_linker_over_icews_names() -> None:
    kg = TemporalKG(
        [Fact("a", "Make_statement", "b"), Fact("a", "Make_a_visit", "b"), Fact("a", "Consult", "b")]
    )
    relations = RelationLinker.from_kg(kg)
    assert relations.resolve("make statement") == "Make_statement"
    assert relations.link("make a statement")[0].name == "Make_statement"


def test_exact_lookup_at_scale() -> None:
    """At 125k entities an exact label still finds its one entity (speed is measured in bench/, not here)."""
    names = [f"Q{i}" for i in range(125_000)]
    labels = {n: f"entity number {i} of the test" for i, n in enumerate(names)}
    linker = EntityLinker(names, labels)
    for i in range(0, 125_000, 997):
        assert linker.link(f"Entity number {i} of the test")[0].name == f"Q{i}"
