""":mod:`tkgqa.query.obfuscate`, the obfuscated-entity setting ``K′``/``Q′`` of the CIK-LLM paper (Fig. 6):
the word-half swap, ``K′`` and ``Q′`` keep the structure, the merged ``K_all ∪ K′`` keeps colliding names
apart, times stay; ``tkgqa.methods.cik`` still exports the names. Hand-written KGs only."""

from __future__ import annotations

import pytest

from tkgqa.datasets.base import Question
from tkgqa.kg import Fact, TemporalKG
from tkgqa.query.obfuscate import (
    entity_label_words,
    obfuscate_kg,
    obfuscate_label,
    obfuscate_question,
    obfuscate_setting,
    obfuscate_word,
)

MSOT = "member_of_sports_team"


@pytest.fixture
def football() -> TemporalKG:
    return TemporalKG(
        [
            Fact.of("Darren_Anderton", MSOT, "Portsmouth_F.C.", "1990", "1992"),
            Fact.of("Darren_Anderton", MSOT, "Tottenham_Hotspur_F.C.", "1992", "2004"),
            Fact.of("Darren_Anderton", MSOT, "Birmingham_City_F.C.", "2004", "2005"),
            Fact.of("Darren_Anderton", "award_received", "PFA_Team_of_the_Year", "1993"),
            Fact.of("Glenn_Hoddle", "head_coach", "Tottenham_Hotspur_F.C.", "2001", "2003"),
        ],
        name="football",
    )


def test_obfuscation_swaps_word_halves() -> None:
    assert obfuscate_label("Roberto Baggio") == "Ertorob Giobag"
    assert obfuscate_word("NATO") == "TONA"
    assert obfuscate_label("Citizen (Thailand)") == "Izencit (Landthai)"
    assert obfuscate_label("Head of Government") == "Adhe of Nmentgover"


def test_obfuscated_kg_and_questions_keep_structure(football: TemporalKG) -> None:
    kg2, mapping = obfuscate_kg(football)
    assert len(kg2) == len(football) and sorted(kg2.relations) == sorted(football.relations)
    assert mapping["Darren_Anderton"] == "Rendar_Rtonande"
    assert kg2.label(mapping["Darren_Anderton"]) == obfuscate_label("Darren Anderton")
    q = Question(
        qid="q",
        text="What was the last team of Darren Anderton?",
        answers=["Birmingham City F.C.", "1992"],
        entities=["Darren_Anderton"],
    )
    q2 = obfuscate_question(q, entity_label_words(football), mapping)
    assert q2.text == f"What was the last team of {obfuscate_label('Darren Anderton')}?"
    assert q2.answers == [obfuscate_label("Birmingham City F.C."), "1992"]
    assert q2.entities == [mapping["Darren_Anderton"]] and kg2.has_entity(q2.entities[0])


def test_obfuscate_setting_merges_and_keeps_colliding_names_apart() -> None:
    kg = TemporalKG([Fact.of("Toto", "r", "Anna", "2000"), Fact.of("Otto", "r", "Bob", "2001")])
    qs = [Question(qid="1", text="Whom did Toto r?", answers=["Anna"])]
    setting = obfuscate_setting(qs, kg)
    assert setting.merged and len(setting.kg) == 4
    assert setting.mapping["Toto"] != "Toto" and setting.kg.label(setting.mapping["Toto"]) == "Toto"
    assert setting.questions[0].entities == [setting.mapping["Toto"]] and setting.questions_linked == 1
    assert setting.questions[0].answers == ["Naan"]
    alone = obfuscate_setting(qs, kg, merge=False)
    assert len(alone.kg) == 2 and alone.describe()["kg"] == "K′"


def test_obfuscated_question_keeps_its_times() -> None:
    kg = TemporalKG([Fact.of("Theresa_May", "visit", "Thailand", "2009-05-02")])
    q = Question(qid="1", text="Who wanted to meet with Thailand in May 2009?", answers=["Theresa May"])
    text = obfuscate_setting([q], kg).questions[0].text
    assert text == "Who wanted to meet with Landthai in May 2009?"


def test_cik_package_still_exports_the_obfuscation_names() -> None:
    import tkgqa.methods.cik as cik
    import tkgqa.query.obfuscate as obfuscate

    assert cik.obfuscate_label is obfuscate.obfuscate_label
    assert cik.obfuscate_setting is obfuscate.obfuscate_setting
    assert cik.ObfuscatedSetting is obfuscate.ObfuscatedSetting
