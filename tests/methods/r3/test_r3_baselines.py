"""R3's baselines (``cot0``, ``cot2``, ``kaping``), the automatic grounding score for every method, the CLI
output of ``tkgqa ask --method r3`` and an evaluation run over a CR-LT-style file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from r3_helpers import AXIOM, Script, fact_id, question, small_kg
from typer.testing import CliRunner

from tkgqa.datasets import load_dataset
from tkgqa.errors import ConfigError
from tkgqa.eval import evaluate
from tkgqa.eval.report import read_results
from tkgqa.methods import resolve_method
from tkgqa.methods.base import Answer
from tkgqa.methods.r3 import grounding_of, grounding_score
from tkgqa.methods.r3.grounding import triples_in_text
from tkgqa.outcomes import ResultRow
from tkgqa.query import context_kg
from tkgqa.testing import FakeLLM


def test_cot_baselines() -> None:
    script = Script(baseline="Dogs eat kibble and bulldogs are dogs.\nFinal answer: Yes")
    zero = resolve_method("cot0", llm=script.llm).answer(question(), small_kg())
    assert zero.answers == ["yes"] and "Would a vegetarian" not in script.seen[-1][1]
    two = resolve_method("cot2", llm=script.llm).answer(question(), small_kg())
    assert two.answers == ["yes"] and "Would a vegetarian" in script.seen[-1][1]
    unsure = resolve_method("cot0", llm=FakeLLM(["Final answer: I dont know"])).answer(question(), small_kg())
    assert unsure.abstained and unsure.reason_text == "the model answered I don't know"
    garbled = resolve_method("cot0", llm=FakeLLM(["hmm", "hmm"])).answer(question(), small_kg())
    assert garbled.abstained and garbled.reason_text == "unparsable model output"
    with pytest.raises(ConfigError, match="needs an LLM"):
        resolve_method("cot0").answer(question(), small_kg())


def test_kaping_retrieves_and_records_its_citations() -> None:
    script = Script(
        baseline=lambda u: (
            f"Alma studied at Northbrook [{fact_id(u, 'educated at')}] [F99].\nFinal answer: Yes"
        )
    )
    kg = small_kg()
    answer = resolve_method("kaping", llm=script.llm, embedder="hashing", top_k=4).answer(question(), kg)
    assert answer.answers == ["yes"]
    retrieval = next(s for s in answer.trace if s["step"] == "retrieval")
    assert len(retrieval["facts"]) == 4
    grounding = next(s for s in answer.trace if s["step"] == "grounding")
    assert grounding["unknown_ids"] == ["F99"] and len(grounding["cited_facts"]) == 1
    g = grounding_of(answer, kg)
    assert (g.cited, g.existing, g.grounded) == (2, 1, False)  # a citation of a fact it was not shown


def test_kaping_on_a_choice_question() -> None:
    q = load_dataset("recipe_mpr", "personal_kg").questions[0]
    script = Script(choice=f"It is vegetarian.\nOption: {q.answers[0]}")
    answer = resolve_method("kaping", llm=script.llm, embedder="hashing").answer(q, context_kg(q))
    assert answer.answers == q.answers
    assert "1. " in script.seen[-1][1] and "Below are facts" in script.seen[-1][1]


def test_grounding_score_of_text_citations() -> None:
    kg = small_kg()
    assert triples_in_text("Fact (Alma Reyes, occupation, chemist) and (X, y, z {q: 1})") == [
        ("Alma Reyes", "occupation", "chemist"),
        ("X", "y", "z"),
    ]
    real = Answer(["yes"], raw_output="Fact “(Alma Reyes, occupation, chemist)” says so.")
    invented = Answer(["yes"], raw_output="Fact (Alma Reyes, occupation, boxer) says so.")
    uncited = Answer(["no"], raw_output="Everyone knows.")
    abstained = Answer.abstain("no idea")
    gs = [grounding_of(a, kg) for a in (real, invented, uncited, abstained)]
    assert [g.grounded for g in gs] == [True, False, False, False]
    row = ResultRow(predictions=["yes"], raw_output=real.raw_output)
    assert grounding_of(row, kg).grounded
    score = grounding_score(gs)
    assert score == {"n": 4, "answered": 3, "grounded": 1, "score_answered": 1 / 3, "score_all": 0.25}


def test_cli_ask_prints_axiom_steps_and_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    from tkgqa.cli import _load_commands, app
    from tkgqa.llm import LLM_BACKENDS

    _load_commands()

    kg_file = tmp_path / "kg.tsv"
    kg_file.write_text(
        "Alma Reyes\teducated at\tNorthbrook University\t\t\n"
        "Northbrook University\tmascot\tRufus the Bulldog\t\t\n",
        encoding="utf-8",
    )
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        answer=lambda u: f"Step 1: Alma studied at Northbrook. [{fact_id(u, 'educated at')}]\nAnswer: Yes",
    )
    monkeypatch.setitem(LLM_BACKENDS._factories, "scripted", lambda **_: script.llm)
    result = CliRunner().invoke(
        app,
        [
            "ask",
            "Does the mascot of Alma Reyes's university eat kibble?",
            "--kg",
            str(kg_file),
            "--method",
            "r3",
            "--llm",
            "scripted",
            "--method-option",
            "embedder=hashing",
            "--method-option",
            "llm_pick=off",
            "--method-option",
            "preset=ours",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "axiom R1: The mascot must be a dog" in result.output
    assert "step 1: Alma studied at Northbrook." in result.output
    assert "(Alma Reyes, educated at, Northbrook University)" in result.output
    assert "answer: yes" in result.output


def test_eval_over_a_crlt_file_with_grounding(tmp_path: Path) -> None:
    entry = {
        "id": "S6",
        "query": "Does the mascot of Alma Reyes's university eat kibble?",
        "answer": True,
        "KG Entities": {"Alma Reyes": "Q1"},
        "Inference Rule": "The mascot must be a dog.",
        "KG Triples": "1- (Alma Reyes, educated at, Northbrook University), "
        "2- (Northbrook University, mascot, Rufus the Bulldog)",
        "Reasoning Steps": [],
        "Reasoning Strategy": ["biological"],
    }
    (tmp_path / "CR-LT-QA.json").write_text(json.dumps([entry]), encoding="utf-8")
    ds = load_dataset("crlt_qa", tmp_path)
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        answer=lambda u: f"Step 1: Alma studied at Northbrook. [{fact_id(u, 'educated at')}]\nAnswer: Yes",
    )
    method = resolve_method("r3", llm=script.llm, embedder="hashing", llm_pick="off", preset="ours")
    report = evaluate(method, ds, None, tmp_path / "run", progress=False, check_support=False)
    assert report.n == 1 and report.errors == 0
    rows = read_results(tmp_path / "run" / "results.jsonl")
    assert rows[0].strict_hit and rows[0].predictions == ["yes"]
    from tkgqa.kg.loaders import load_kg

    assert ds.kg_path is not None
    kg = load_kg(ds.kg_path)
    assert grounding_of(rows[0], kg).grounded
