"""R3's and its baselines' answer traces are typed (issue #30): every step an instance of a step class
(:mod:`tkgqa.methods.r3.steps`, or ``RefusedStep`` for an unreadable reply), none a ``RecordedStep``, read
back from the JSON form as the same classes; the grounding score reads the typed steps of an answer and
the JSON of a row alike."""

from __future__ import annotations

from r3_helpers import Script, fact_id, grounded_script, question, small_kg

from tkgqa.datasets import load_dataset
from tkgqa.methods import resolve_method
from tkgqa.methods.base import Answer, RefusedStep
from tkgqa.methods.r3 import grounding_of
from tkgqa.methods.r3.steps import (
    ChoiceGroundingStep,
    CitationStep,
    EntitiesStep,
    ExplanationStep,
    FactsStep,
    GroundingStep,
    PreferenceStep,
    RetrievalStep,
    TreeStep,
)
from tkgqa.outcomes import ResultRow
from tkgqa.query import context_kg
from tkgqa.testing import FakeLLM
from tkgqa.trace import RecordedStep, TraceStep, read_trace


def typed(answer: Answer) -> list[type[TraceStep]]:
    """The classes of ``answer``'s steps, checked typed and read back from JSON as the same classes."""
    kinds = [type(s) for s in answer.trace]
    assert answer.trace and all(isinstance(s, TraceStep) for s in answer.trace)
    assert not any(isinstance(s, RecordedStep) for s in answer.trace)
    written = answer.to_dict()["trace"]
    back = read_trace(written)
    assert [type(s) for s in back] == kinds
    assert [s.to_dict() for s in back] == written and back == list(answer.trace)
    return kinds


def test_r3_query_steps() -> None:
    kg = small_kg()
    method = resolve_method(
        "r3", llm=grounded_script().llm, embedder="hashing", preset="ours", llm_pick="facts"
    )
    answer = method.answer(question(), kg)
    assert answer.answers == ["yes"]
    assert typed(answer) == [EntitiesStep, TreeStep, FactsStep, GroundingStep, ExplanationStep]
    entities, tree, facts, grounding, explanation = answer.trace
    assert isinstance(entities, EntitiesStep) and entities.union == ["Alma Reyes"]
    assert "llm_error" not in entities  # written only when the extractor's reply was refused
    assert isinstance(tree, TreeStep) and tree.answered_at == {"branch": 0, "depth": 0}
    assert list(tree) == ["step", "max_depth", "breadth", "branches", "answered_at", "verdict"]
    assert isinstance(facts, FactsStep) and facts.table
    assert (
        isinstance(grounding, GroundingStep) and grounding.cited_facts[0]["object"] == "Northbrook University"
    )
    assert list(grounding) == ["step", "verdict", "cited_facts", "steps", "n_fact_steps"]
    assert isinstance(explanation, ExplanationStep) and explanation.lines[-1] == "answer: yes"
    # the grounding score of the answer (typed steps) and of its row (JSON) agree
    row = ResultRow(predictions=answer.answers, raw_output=answer.raw_output, trace=answer.to_dict()["trace"])
    assert grounding_of(answer, kg) == grounding_of(row, kg) and grounding_of(answer, kg).grounded


def test_r3_abstention_and_refusals() -> None:
    kg = small_kg()
    script = Script(entities="Selected entity/entities:\nAlma Reyes", axiom="no rule here")
    abstained = resolve_method("r3", llm=script.llm, embedder="hashing", preset="ours").answer(question(), kg)
    assert abstained.abstained
    assert typed(abstained) == [EntitiesStep, TreeStep, FactsStep, ExplanationStep]

    refused = Script(entities="", axiom="no rule here")
    odd = resolve_method("r3", llm=refused.llm, embedder="hashing", preset="ours").answer(question(), kg)
    assert typed(odd) == [EntitiesStep, TreeStep, FactsStep, ExplanationStep]
    entities = odd.trace[0]
    assert isinstance(entities, EntitiesStep) and "no entity names" in entities.llm_error
    assert list(entities)[-1] == "llm_error"  # written last, only when the extractor's reply was refused


def test_r3_preference_steps() -> None:
    q = load_dataset("recipe_mpr", "personal_kg").questions[1]
    kg = context_kg(q)
    answer = resolve_method("r3", judge="embedding", embedder="hashing", preset="ours").answer(q, kg)
    assert typed(answer) == [PreferenceStep, FactsStep, ChoiceGroundingStep, ExplanationStep]
    pref, _, grounding, _ = answer.trace
    assert isinstance(pref, PreferenceStep) and pref.chosen is not None
    assert list(pref) == ["step", "axiom", "judge", "choice_rule", "options", "chosen"]
    assert isinstance(grounding, ChoiceGroundingStep) and grounding.verdict == "choice"
    assert grounding_of(answer, kg).answered

    unparsed = Script(axiom="no premises here")
    failed = resolve_method("r3", llm=unparsed.llm, embedder="hashing", preset="ours").answer(
        load_dataset("recipe_mpr", "personal_kg").questions[0], kg
    )
    assert failed.abstained and failed.reason_text == "axiom unparsable"
    assert typed(failed) == [RefusedStep] and list(failed.trace[0]) == ["step", "error"]
    assert failed.trace[0]["step"] == "preference"


def test_baseline_steps() -> None:
    kg = small_kg()
    script = Script(
        baseline=lambda u: (
            f"Alma studied at Northbrook [{fact_id(u, 'educated at')}] [F99].\nFinal answer: Yes"
        )
    )
    kaping = resolve_method("kaping", llm=script.llm, embedder="hashing", top_k=4).answer(question(), kg)
    assert typed(kaping) == [RetrievalStep, CitationStep]
    retrieval, citation = kaping.trace
    assert isinstance(retrieval, RetrievalStep) and len(retrieval.facts) == 4
    assert isinstance(citation, CitationStep) and citation.unknown_ids == ["F99"]
    assert list(citation) == ["step", "cited_facts", "unknown_ids"]
    g = grounding_of(kaping, kg)
    assert (g.cited, g.existing) == (2, 1)
    row = ResultRow(predictions=kaping.answers, raw_output=kaping.raw_output, trace=kaping.to_dict()["trace"])
    assert grounding_of(row, kg) == g

    garbled = resolve_method("cot0", llm=FakeLLM(["hmm", "hmm"])).answer(question(), kg)
    assert garbled.abstained and typed(garbled) == [RefusedStep]
    assert list(garbled.trace[0]) == ["step", "error"] and garbled.trace[0]["step"] == "parse_failure"
