"""ARI's presets (paper by default, ours), the deviations report, the embedder choice, the two action spaces,
the two filters of Eq. 3, the prompt's example sets, truncation, induction samples and the online memory."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from tkgqa.datasets.base import Question
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods.ari import ARIEnvironment, ARIMethod, FilterSettings
from tkgqa.methods.ari.actions import Action, AgentState
from tkgqa.methods.ari.config import ARIConfig, EmbedderName, Preset
from tkgqa.methods.ari.environment import ActionSpace, FilterMode
from tkgqa.methods.ari.memory import ARIMemory, HistoryRecord, HistoryStep
from tkgqa.methods.ari.prompts import PAPER_EXAMPLES, ExampleSet, format_examples
from tkgqa.query import QuestionLinker
from tkgqa.retrieval.similarity import Similarity
from tkgqa.testing import FakeLLM

# Invented names. Whom the first visitor of Freedonia met needs chaining through Alice.
FACTS = [
    Fact.of("Alice", "Make a visit", "Freedonia", "2010-01-05"),
    Fact.of("Bob", "Make a visit", "Freedonia", "2011-03-02"),
    Fact.of("Carol", "Make a visit", "Freedonia", "2012-07-20"),
    Fact.of("Alice", "Meet", "Zed", "2011-04-01"),
    Fact.of("Alice", "Meet", "Yan", "2012-05-01"),
    Fact.of("Alice", "Criticize", "Freedonia", "2012-08-01"),
    Fact.of("Erin", "Criticize", "Freedonia", "2013-05-05"),
]


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG(FACTS, name="tiny-presets")


def q(text: str, answers: list[str] | None = None) -> Question:
    return Question(qid="p1", text=text, answers=answers or [])


# --- presets and the report ------------------------------------------------------------------------------
def test_paper_is_the_default_preset_and_ours_switches_every_improvement() -> None:
    paper = ARIConfig().effective()
    ours = ARIConfig(preset=Preset.OURS).effective()
    assert paper.preset is Preset.PAPER
    assert (paper.action_space, paper.filter_mode, paper.examples) == (
        ActionSpace.PAPER,
        FilterMode.EQ3,
        ExampleSet.PAPER,
    )
    assert (paper.truncate_results, paper.fallback_answer, paper.induction_candidates) == (False, False, True)
    assert (ours.action_space, ours.filter_mode, ours.examples) == (
        ActionSpace.REFERENCE,
        FilterMode.NONEMPTY_FIRST,
        ExampleSet.OURS,
    )
    assert (ours.truncate_results, ours.fallback_answer, ours.choice_mode, ours.retries) == (
        True,
        True,
        "auto",
        1,
    )
    # an explicit setting wins over the preset; effective() is idempotent
    assert ARIConfig.model_validate({"embedder": "auto"}).embedder is None  # 'auto' = unset
    mixed = ARIConfig(action_space=ActionSpace.REFERENCE).effective()
    assert mixed.action_space is ActionSpace.REFERENCE and mixed.effective() == mixed


def test_describe_names_the_preset_and_every_deviation_in_force() -> None:
    paper = ARIMethod(policy="oracle").describe()
    assert paper["preset"] == "paper" and paper["config"]["preset"] == "paper"
    assert paper["config"]["action_space"] == "paper" and paper["config"]["embedder"] == "hashing"
    # the test suite forces hashing ($TKGQA_ARI_EMBEDDER): a lexical similarity is a deviation
    assert any(d.startswith("embedder=hashing") for d in paper["deviations"])
    assert not any(d.startswith(("action_space", "filter_mode", "truncate")) for d in paper["deviations"])
    assert any(u.startswith("top_k=15: ours") for u in paper["unspecified_by_paper"])
    assert any("3 correct + 3 incorrect" in u for u in paper["unspecified_by_paper"])
    ours = ARIMethod(policy="oracle", preset="ours", no_filter=True).describe()["deviations"]
    for name in (
        "action_space=reference",
        "filter_mode=nonempty_first",
        "truncate_results=true",
        "no_filter",
    ):
        assert any(d.startswith(name) for d in ours), name


def test_auto_embedder_is_minilm_when_installed_else_hashing_with_one_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tkgqa.methods.ari.config as config

    monkeypatch.delenv("TKGQA_ARI_EMBEDDER", raising=False)
    monkeypatch.setattr(config, "_WARNED", set())
    missing: list[str] = []
    monkeypatch.setattr(EmbedderName, "missing_modules", lambda self: list(missing))
    assert config.auto_embedder() is EmbedderName.MINILM
    missing.append("sentence_transformers")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        method = ARIMethod(policy="oracle")
        ARIMethod(policy="oracle")
    assert method.config.embedder is EmbedderName.HASHING
    assert sum("falls back to the 'hashing' embedder" in str(w.message) for w in caught) == 1
    described = method.describe()
    assert any("fallback, minilm is not installed" in f for f in described["fallbacks"])
    assert any("fallback" in d for d in described["deviations"])
    monkeypatch.setenv("TKGQA_ARI_EMBEDDER", "minlm")
    with pytest.raises(Exception, match="TKGQA_ARI_EMBEDDER"):
        config.auto_embedder()


# --- action spaces (Eq. 1-2) -----------------------------------------------------------------------------
def env_for(kg: TemporalKG, text: str, **settings: object) -> ARIEnvironment:
    question = q(text)
    linked = QuestionLinker.anchors().link(question, kg)
    return ARIEnvironment(kg, linked.anchors, Similarity(question.text, None), FilterSettings(**settings))  # type: ignore[arg-type]


def test_paper_action_space_chains_through_identified_entities(kg: TemporalKG) -> None:
    text = "Whom did the first visitor of Freedonia meet?"
    paper = env_for(kg, text, action_space=ActionSpace.PAPER, top_k=100, max_new_subjects=2)
    reference = env_for(kg, text, action_space=ActionSpace.REFERENCE, top_k=100)
    visits = Action("get_head_entity", "Freedonia", "Make a visit")
    for env in (paper, reference):
        state, _ = env.step(AgentState(), visits)
        state, items = env.step(state, Action("get_first"))
        assert [it.value for it in items] == ["Alice"]
    chained = Action("get_tail_entity", "Alice", "Criticize")
    p_state, _ = paper.step(paper.step(AgentState(), visits)[0], Action("get_first"))
    assert paper.subjects(p_state) == ["Freedonia", "Alice"] and chained in paper.candidates(p_state)
    r_state, _ = reference.step(reference.step(AgentState(), visits)[0], Action("get_first"))
    assert chained not in reference.candidates(r_state)
    # reference: the relation is locked after the first lookup; paper: every relation stays available
    assert {a.relation for a in reference.candidates(r_state) if a.is_lookup} == {"Make a visit"}
    assert {"Make a visit", "Criticize"} <= {a.relation for a in paper.candidates(p_state) if a.is_lookup}
    # a list naming more entities than max_new_subjects adds none
    wide, _ = paper.step(AgentState(), visits)
    assert paper.subjects(wide) == ["Freedonia"]


def test_oracle_reaches_a_chained_answer_only_in_the_paper_space(kg: TemporalKG) -> None:
    question = q("Whom did the first visitor of Freedonia meet?", answers=["Zed"])
    paper = ARIMethod(policy="oracle", top_k=100).answer(question, kg)
    assert paper.answers[:1] == ["Zed"]
    reference = ARIMethod(policy="oracle", top_k=100, action_space="reference").answer(question, kg)
    assert reference.answers[:1] != ["Zed"]


# --- the filter (Eq. 3) ----------------------------------------------------------------------------------
def test_eq3_ranks_then_drops_empty_lookups_while_ours_drops_then_ranks(kg: TemporalKG) -> None:
    text = "Who visited Freedonia in 2011?"
    eq3 = env_for(kg, text, mode=FilterMode.EQ3, top_k=3, action_space=ActionSpace.REFERENCE)
    ours = env_for(kg, text, mode=FilterMode.NONEMPTY_FIRST, top_k=3, action_space=ActionSpace.REFERENCE)
    enumerated = [a for a in eq3.enumerate(AgentState()) if a.is_lookup]
    top = eq3.rank(enumerated)[:3]
    offered_eq3 = [a for a in eq3.candidates(AgentState()) if a.is_lookup]
    assert offered_eq3 == [a for a in top if eq3.count(a) > 0] and len(offered_eq3) <= 3
    offered_ours = [a for a in ours.candidates(AgentState()) if a.is_lookup]
    assert len(offered_ours) == min(3, sum(1 for a in enumerated if ours.count(a) > 0))
    assert all(ours.count(a) > 0 for a in offered_ours)


# --- prompt, truncation, forced answer ----------------------------------------------------------------------
def test_paper_prompt_uses_table_8_and_shows_whole_results(kg: TemporalKG) -> None:
    llm = FakeLLM(["$get_head_entity(Freedonia, Make a visit, no time constraints)$", "$answer(Alice)$"])
    ARIMethod(llm=llm).answer(q("Who visited Freedonia?"), kg)
    first, second = (r.messages[-1].content for r in llm.requests)
    assert PAPER_EXAMPLES[0][0] in first and "Angela Merkel" not in first  # Table 8, not our examples
    assert "To solve this question, you need to first identify" in first  # Fig. 8's sentence
    assert "'...'" not in second and "Carol" in second and "Bob" in second  # the whole list, no truncation
    ours = FakeLLM(["$get_head_entity(Freedonia, Make a visit, no time constraints)$", "$answer(Alice)$"])
    ARIMethod(llm=ours, preset="ours", max_result_items=2).answer(q("Who visited Freedonia?"), kg)
    shown = ours.requests[1].messages[-1].content
    assert "Angela Merkel" in shown and "'...'" in shown and "(3 results)" in shown
    assert len(format_examples(9, source=ExampleSet.PAPER).split("Example ")) == 6  # all 5 of Table 8


# --- memory: candidates in induction samples, online additions ---------------------------------------------
def test_induction_samples_include_the_candidate_sets_in_the_paper_preset() -> None:
    record = HistoryRecord(
        qid="h1",
        question="Who visited Freedonia?",
        masked="Who visited {entity}?",
        steps=[HistoryStep(candidates=["get_first({entities})", "answer(Alice)"], action="answer(Alice)")],
        gold=["Alice"],
        correct=True,
    )
    assert "Candidate actions 0: ['get_first({entities})', 'answer(Alice)']" in record.example_text(True)
    assert "Candidate actions" not in record.example_text()
    from tkgqa.retrieval import HashingEmbedder

    mem = ARIMemory([record, record.model_copy(update={"qid": "h2", "correct": False})], n_clusters=1)
    mem.fit(HashingEmbedder())
    llm = FakeLLM(lambda req: "Overall Instruction: find the visits, then answer the entity found.")
    mem.induce(llm, with_candidates=True)
    assert "Candidate actions 0:" in llm.requests[0].messages[-1].content


def test_online_memory_adds_processed_questions_and_refreshes(kg: TemporalKG, tmp_path: Path) -> None:
    llm = FakeLLM(lambda req: "Overall Instruction: find the visits first, then answer the entity found.")
    method = ARIMethod(policy="oracle", llm=llm, online_memory=True, online_refresh=2, n_clusters=1)
    assert any(d.startswith("online_memory=true") for d in method.describe()["deviations"])
    method.answer(q("Who visited Freedonia first?", ["Alice"]), kg)
    assert method.memory is not None and len(method.memory) == 1 and method.memory.labels is None
    method.answer(Question(qid="p2", text="Who criticized Freedonia?", answers=["Erin"]), kg)
    assert method.memory.labels == [0, 0] and method.memory.methodologies["clustered"]
    assert {r.correct for r in method.memory.records} == {True}
