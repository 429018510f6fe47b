"""One answer normaliser: the evaluation harness, the coverage diagnostics and ARI's gold check share it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tkgqa.eval import scoring
from tkgqa.kg import Fact, TemporalKG
from tkgqa.kg.linking import normalize
from tkgqa.methods.ari.gold import value_matches_gold
from tkgqa.query import answer_covered, normalize_answer, normalize_text
from tkgqa.time import TimePoint


def test_eval_uses_the_query_layer_normaliser() -> None:
    assert scoring.normalize_answer is normalize_answer
    assert scoring.normalize_text is normalize_text is normalize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("May 2012", "2012-05"),
        ("2012-05", "2012-05"),
        ("Côte d'Ivoire", "cote d ivoire"),
        ("Côte_d'Ivoire", "cote d ivoire"),
        ("Citizen_(North_Korea)", "citizen north korea"),
        ("A.C._Milan", "a c milan"),
    ],
)
def test_one_normal_form(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_every_consumer_agrees_on_the_normal_form() -> None:
    kg = TemporalKG([Fact("Côte_d'Ivoire", "visit", "Ghana", TimePoint(2012, 5, 3), TimePoint(2012, 5, 3))])
    facts = kg.facts()
    assert answer_covered(["Cote d'Ivoire"], facts, kg)
    assert value_matches_gold(kg, "Côte_d'Ivoire", ["cote d ivoire"])
    assert value_matches_gold(kg, "2012-05", ["May 2012"])
    gold = scoring.Gold.of(["Cote d'Ivoire", "May 2012"])
    assert gold.matches(scoring.prediction_forms("Côte_d'Ivoire")) is not None
    assert gold.matches(scoring.prediction_forms("2012-05")) is not None


@given(st.text(max_size=40))
def test_normal_forms_are_idempotent(text: str) -> None:
    once = normalize_answer(text)
    assert normalize_answer(once) == once
    assert normalize_text(normalize_text(text)) == normalize_text(text)
