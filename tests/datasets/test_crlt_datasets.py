"""R3's datasets: ``crlt_qa`` / ``crlt_claims`` (CR-LT-KGQA) and ``recipe_mpr`` (Recipe-MPR and the bundled
personalised examples); the closed-answer scoring rule they rely on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tkgqa.datasets import load_dataset
from tkgqa.datasets.recipe_mpr import bundled_personal_file, recipe_entity
from tkgqa.errors import ConfigError, DataError
from tkgqa.eval.scoring import score_answer
from tkgqa.kg.loaders import load_kg

ENTRY = {
    "id": "C1",
    "query": "Naďa Hejná spent all her life as a single bachelor.",
    "answer": False,
    "KG Entities": {"Naďa Hejná": "Q12772348"},
    "Inference Rule": "There must be no evidence of marriage.",
    "KG Triples": "1- (Naďa Hejná, spouse, Vít Hejný)",
    "Reasoning Steps": [
        {"Step": "She was married.", "facts used in this step": ["1- (Naďa Hejná, spouse, Vít Hejný)"]},
        {"step": "So the claim is false."},
    ],
    "Reasoning Strategy": ["definition"],
}


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "crlt_kgqa"
    folder.mkdir()
    (folder / "CR-LT-ClaimVerification.json").write_text(json.dumps([ENTRY]), encoding="utf-8")
    qa = [
        {**ENTRY, "id": "S1", "query": "Was Naďa Hejná married?", "answer": True},
        {**ENTRY, "id": "S39", "query": "Broken?", "answer": "Broken?"},
    ]
    (folder / "CR-LT-QA.json").write_text(json.dumps(qa), encoding="utf-8")
    return folder


def test_claims_questions_keep_gold_out_of_linking_fields(tmp_path: Path) -> None:
    ds = load_dataset("crlt_claims", _folder(tmp_path))
    (q,) = ds.questions
    assert (q.qid, q.answers, q.qtype, q.types) == ("C1", ["false"], "claim", ["definition"])
    assert q.entities == [] and q.context is None
    assert q.extra["choices"] == ["true", "false"]
    assert q.extra["gold_entities"] == {"Naďa Hejná": "Q12772348"}
    assert q.extra["gold_facts"][0]["object"] == "Vít Hejný"
    assert [s["facts"] for s in q.extra["reasoning_steps"]] == [["1- (Naďa Hejná, spouse, Vít Hejný)"], []]
    assert ds.kg_path is not None and ds.kg_path.name == "CR-LT-ClaimVerification.json"
    assert "oracle subgraph" in ds.meta["setting"]
    kg = load_kg(ds.kg_path)
    assert kg.has_entity("Naďa Hejná")


def test_qa_skips_and_reports_an_entry_without_a_truth_value(tmp_path: Path) -> None:
    ds = load_dataset("crlt_qa", _folder(tmp_path))
    assert [q.qid for q in ds.questions] == ["S1"] and ds.questions[0].answers == ["yes"]
    assert ds.meta["skipped_entries"] == ["S39: answer 'Broken?' is not true/false"]


def test_per_question_gold_context(tmp_path: Path) -> None:
    ds = load_dataset("crlt_claims", _folder(tmp_path), context="retrieved")
    ctx = ds.questions[0].context
    assert ctx is not None and [f.object for f in ctx] == ["Vít Hejný"]


def test_one_split_only(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="one split"):
        load_dataset("crlt_qa", _folder(tmp_path), split="dev")


def test_closed_answers_have_no_lenient_substring_hit(tmp_path: Path) -> None:
    (q,) = load_dataset("crlt_claims", _folder(tmp_path)).questions
    wrong = score_answer(q, ["true"], "the claim is false or true, I cannot say")
    assert not wrong.strict_hit and not wrong.lenient_hit
    right = score_answer(q, ["False"], "")
    assert right.strict_hit and right.lenient_hit


MPR = [
    {
        "query": "I want a warm dish with oysters",
        "query_type": {"Specific": 0, "Commonsense": 1, "Negated": 0, "Analogical": 0, "Temporal": 0},
        "options": {"a1": "Creamy oyster soup", "b2": "Crackers shaped like oysters", "c3": "Clam chowder"},
        "answer": "a1",
        "correctness_explanation": {"warm dish": "soup", "oysters": "oyster"},
    }
]


def test_recipe_mpr_options_are_context_facts(tmp_path: Path) -> None:
    (tmp_path / "500QA.json").write_text(json.dumps(MPR), encoding="utf-8")
    ds = load_dataset("recipe_mpr", tmp_path)
    (q,) = ds.questions
    assert (q.qid, q.answers, q.answer_ids, q.types) == (
        "mpr-0000",
        ["Creamy oyster soup"],
        ["a1"],
        ["Commonsense"],
    )
    # the options in an order seeded per entry (the file lists the answer first), the same on every load
    assert sorted(q.extra["choices"]) == [
        "Clam chowder",
        "Crackers shaped like oysters",
        "Creamy oyster soup",
    ]
    assert load_dataset("recipe_mpr", tmp_path).questions[0].extra["choices"] == q.extra["choices"]
    assert q.extra["aspects"] == {"warm dish": "soup", "oysters": "oyster"}
    assert q.context is not None and {f.subject for f in q.context} >= {recipe_entity("a1")}
    assert score_answer(q, ["a1"]).strict_hit  # the recipe id counts too
    assert not score_answer(q, ["Clam chowder"], "Creamy oyster soup?").lenient_hit


def test_recipe_mpr_bad_entry(tmp_path: Path) -> None:
    (tmp_path / "500QA.json").write_text(json.dumps([{**MPR[0], "answer": "zz"}]), encoding="utf-8")
    with pytest.raises(DataError, match="entry #0"):
        load_dataset("recipe_mpr", tmp_path)


def test_bundled_personal_examples() -> None:
    ds = load_dataset("recipe_mpr", "personal_kg")
    assert ds.meta["personalised"] and len(ds) == 5
    assert bundled_personal_file().is_file()
    for q in ds.questions:
        user = q.extra["user"]
        assert q.text.startswith(f"{user}: ") and len(q.extra["options"]) == 6
        assert q.answer_ids[0] not in q.extra["violates_personal"]
        assert q.context is not None and any(f.subject == user for f in q.context)
        assert any(f.relation == "contains" for f in q.context)


@pytest.mark.slow
def test_shared_crlt_and_recipe_mpr(shared_data: Path) -> None:
    qa = load_dataset("crlt_qa", shared_data / "crlt_kgqa")
    claims = load_dataset("crlt_claims", shared_data / "crlt_kgqa")
    assert len(qa) == 139 and qa.meta["skipped_entries"][0].startswith("S39")
    assert len(claims) == 105 and {q.answers[0] for q in claims} == {"true", "false"}
    mpr = load_dataset("recipe_mpr", shared_data / "recipe_mpr")
    assert len(mpr) == 350 and all(len(q.extra["options"]) == 5 for q in mpr)


def test_recipe_mpr_gold_is_not_always_the_first_option(shared_data: Path) -> None:
    ds = load_dataset("recipe_mpr", shared_data / "recipe_mpr")
    first = sum(q.extra["options"][0]["id"] == q.answer_ids[0] for q in ds.questions)
    assert 0 < first < len(ds.questions) / 2  # about one in five, as a uniform order gives
