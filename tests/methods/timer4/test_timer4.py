"""TimeR4: rewrite detection, the retrieve-rewrite-retrieve-rerank pipeline with FakeLLM, φ_t rerank order,
ablations, coverage and instruction-data export — on a hand-written KG and the demo KG (hashing embedder,
no model download, no network)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tkgqa.datasets.base import Question
from tkgqa.errors import ConfigError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods import resolve_method
from tkgqa.methods.timer4 import (
    RewriteMode,
    TimeR4Config,
    TimeR4Method,
    accept_rewrite,
    export_instruction_data,
    needs_rewrite,
    place_time,
    question_coverage,
)
from tkgqa.methods.timer4.prompts import parse_answers, parse_rewrite
from tkgqa.testing import FakeLLM
from tkgqa.time import Interval, TemporalRelation, TimePoint

IN = TemporalRelation.IN


def praise_facts() -> list[Fact]:
    return [
        Fact.of("Juan_Carlos_I", "Praise_or_endorse", "Vietnam", "2006-02-22"),
        Fact.of("Vietnam", "Praise_or_endorse", "Juan_Carlos_I", "2006-02-22"),
        Fact.of("China", "Praise_or_endorse", "Juan_Carlos_I", "2006-01-10"),
        Fact.of("France", "Praise_or_endorse", "Juan_Carlos_I", "2006-03-01"),
        Fact.of("Germany", "Praise_or_endorse", "Juan_Carlos_I", "2006-05-01"),
        Fact.of("Italy", "Praise_or_endorse", "Juan_Carlos_I", "2007-08-01"),
        Fact.of("Japan", "Make_a_visit", "Juan_Carlos_I", "2006-03-02"),
    ]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG(praise_facts(), name="praise")


IMPLICIT = "After Vietnam, who was the first to praise Juan Carlos I?"
EXPLICIT = "After 2006-02-22, who was the first to praise Juan Carlos I?"


def method(llm: FakeLLM | None = None, **kw: Any) -> TimeR4Method:
    return TimeR4Method(llm=llm, embedder="hashing", cache_embeddings=False, **kw)


# --- rewrite -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "implicit"),
    [
        (IMPLICIT, True),
        ("Who praised Kuwait before Nuri al-Maliki?", True),
        ("who was the president when the 15 amendment was ratified", True),
        ("Who did Ethiopia attack on the same day as the Hizbul Islam fighter?", True),
        (EXPLICIT, False),
        ("Before 14 October 2015, who made Burundi suffer from conventional military forces?", False),
        ("In 2005-01, who used small arms to attack Thailand?", False),
        ("When did Kitti Wasinondh last express an intention to negotiate with Thailand?", False),
        ("Could you tell me the exact month when Agence France-Presse appealed to China?", False),
        ("Who was the first country that Ethiopia expressed optimism about?", False),
    ],
)
def test_needs_rewrite(text: str, implicit: bool) -> None:
    assert needs_rewrite(text) is implicit


def test_accept_rewrite_requires_a_new_explicit_time() -> None:
    assert accept_rewrite(IMPLICIT, EXPLICIT)
    assert not accept_rewrite(IMPLICIT, IMPLICIT)
    assert not accept_rewrite(IMPLICIT, "France")
    assert not accept_rewrite(IMPLICIT, "['France']")
    assert (
        parse_rewrite('Question: "After 2006-02-22, who was first?"\n') == "After 2006-02-22, who was first?"
    )


def test_question_without_implicit_time_is_not_rewritten(kg: TemporalKG, home: Path) -> None:
    llm = FakeLLM(["['France']"])  # only the reasoning call is scripted
    answer = method(llm, rewrite_policy="detect").answer(Question(qid="q", text=EXPLICIT), kg)
    assert answer.answers == ["France"] and llm.calls == 1
    rewrite = answer.trace[1]
    assert rewrite["step"] == "rewrite" and rewrite["skipped"] == "no implicit temporal reference"
    assert f"Question: {EXPLICIT}" in llm.requests[0].messages[0].content


def test_paper_preset_sends_every_question_to_the_rewrite(kg: TemporalKG, home: Path) -> None:
    llm = FakeLLM([EXPLICIT, "['France']"])  # the LLM returns the explicit question unchanged
    answer = method(llm).answer(Question(qid="q", text=EXPLICIT), kg)
    assert answer.answers == ["France"] and llm.calls == 2
    rewrite = answer.trace[1]
    assert rewrite["policy"] == "always" and rewrite["mode"] == "llm" and not rewrite["accepted"]
    assert llm.requests[0].messages[0].content.startswith("Replace the temporal fact in questions")


def test_full_pipeline_uses_the_rewritten_question(kg: TemporalKG, home: Path) -> None:
    llm = FakeLLM([EXPLICIT, "Answer: ['France', \"Germany\"]"])
    answer = method(llm).answer(Question(qid="q", text=IMPLICIT), kg)
    assert answer.answers == ["France", "Germany"]
    rewrite_prompt, reason_prompt = (r.messages[0].content for r in llm.requests)
    assert rewrite_prompt.startswith("Replace the temporal fact in questions with explicit timestamps")
    assert "[Juan Carlos I, Praise or endorse, Vietnam, 2006-02-22]" in rewrite_prompt
    assert reason_prompt.startswith("Based on the historical facts, please answer the given question.")
    assert reason_prompt.endswith(f"Question: {EXPLICIT}")
    tks = next(t for t in answer.trace if t["step"] == "tks")
    assert tks["facts"][0] == "France Praise or endorse Juan Carlos I on 2006-03-01"  # φ_t: first after
    assert answer.usage.to_dict()["llm_calls"] == 2 and answer.evidence
    rewrite = answer.trace[1]
    assert rewrite["mode"] == "llm" and rewrite["accepted"] and rewrite["rewritten"] == EXPLICIT


def test_stages_are_reported_as_step_events(kg: TemporalKG, home: Path) -> None:
    from tkgqa.methods import StepEvent, StepKind, step_reporter

    events: list[StepEvent] = []
    llm = FakeLLM([EXPLICIT, "['France']"])
    with step_reporter(events.append):
        method(llm).answer(Question(qid="q", text=IMPLICIT), kg)
    assert [e.index for e in events] == [0, 1, 2] and {e.kind for e in events} == {StepKind.STAGE}
    assert events[0].label.startswith("FKS") and events[1].label == f"rewrite: {EXPLICIT}"
    assert events[2].label.startswith("TKS + φ_t rerank") and events[2].count


def test_unusable_rewrite_keeps_the_original(kg: TemporalKG, home: Path) -> None:
    llm = FakeLLM(["France", "['France']"])
    answer = method(llm).answer(Question(qid="q", text=IMPLICIT), kg)
    rewrite = answer.trace[1]
    assert rewrite["accepted"] is False and rewrite["rewritten"] == IMPLICIT
    assert llm.requests[1].messages[0].content.endswith(f"Question: {IMPLICIT}")


# --- offline (KG) rewrite ----------------------------------------------------------------------------------
def rewrite_kg() -> TemporalKG:
    extra = [
        Fact.of("Korea", "Make_a_visit", "Juan_Carlos_I", "2006-03-02"),
        Fact.of("Spain", "Make_a_visit", "Juan_Carlos_I", "2006-04-02"),
    ]
    return TemporalKG(praise_facts() + extra, name="rewrite")


@pytest.mark.parametrize(
    ("text", "rewritten", "constraint"),
    [
        (IMPLICIT, EXPLICIT, "after 2006-02-22"),
        (
            "Who praised Juan Carlos I before France?",
            "Who praised Juan Carlos I before 2006-03-01?",
            "before 2006-03-01",
        ),
        (
            "Who praised Juan Carlos I last, before France did?",
            "Who praised Juan Carlos I last, before 2006-03-01?",
            "before 2006-03-01",
        ),
        (
            "Who visited Juan Carlos I on the same day as Korea?",
            "Who visited Juan Carlos I on 2006-03-02?",
            "in 2006-03-02",
        ),
    ],
)
def test_kg_rewrite_resolves_the_anchor_event_time(text: str, rewritten: str, constraint: str) -> None:
    outcome = method().rewrite(text, [], rewrite_kg())  # no LLM: rewrite=auto runs the KG rewrite
    assert outcome.rewritten and outcome.mode is RewriteMode.KG
    assert outcome.text == rewritten and str(outcome.constraint) == constraint
    step = outcome.step
    assert step["mode"] == "kg" and step["original"] == text and step["rewritten"] == rewritten
    assert step["time"] == constraint.split()[-1] and step["anchor_facts"] and not step["relaxed"]


def test_kg_rewrite_anchor_relaxation_and_failures() -> None:
    kg = rewrite_kg()
    text = "After Vietnam, who was the first to visit Juan Carlos I?"  # Vietnam never visited: praised
    relaxed = method().rewrite(text, [], kg)
    assert relaxed.text == "After 2006-02-22, who was the first to visit Juan Carlos I?"
    assert relaxed.step["relaxed"] and "Praise_or_endorse" in relaxed.step["anchor_facts"][0]
    strict = method(rewrite_anchor="asked").rewrite(text, [], kg)
    assert not strict.rewritten and strict.constraint is None
    assert strict.step["skipped"].startswith("the reference event is not in the KG")
    unknown = method().rewrite("After Narnia, who was the first to praise Juan Carlos I?", [], kg)
    assert not unknown.rewritten and "Narnia" in unknown.step["skipped"]
    explicit = method(rewrite_policy="detect").rewrite(EXPLICIT, [], kg)
    assert explicit.step["skipped"] == "no implicit temporal reference"
    always = method().rewrite(EXPLICIT, [], kg)  # the paper preset: the KG rewrite finds no event to resolve
    assert not always.rewritten and always.step["policy"] == "always" and always.step["skipped"]


def test_place_time_writes_the_time_where_the_reference_was() -> None:
    span = Interval(TimePoint(1869), TimePoint(1877))
    assert place_time("who was president when the amendment was ratified", IN, span) == (
        "who was president from 1869 to 1877"
    )
    after = TemporalRelation.AFTER
    assert place_time("Who did X visit after Y did in 2012?", after, TimePoint(2012, 3, 1)) == (
        "Who did X visit after 2012-03-01 in 2012?"  # the explicit time of the clause stays
    )
    assert place_time("Who visited X on the same month as Y?", IN, TimePoint(2012, 3)) == (
        "Who visited X in 2012-03?"
    )
    assert place_time("Who visited X after 2012?", after, TimePoint(2012)) is None  # nothing implicit
    assert place_time("Who visited X before Y?", after, TimePoint(2012)) is None  # not the asked relation


_WORDS = [
    "after",
    "before",
    "when",
    "the",
    "same",
    "day",
    "as",
    "X",
    "2012",
    "July",
    ",",
    "?",
    "did",
    "prior",
    "to",
]


@given(st.lists(st.sampled_from(_WORDS), max_size=12), st.sampled_from(list(TemporalRelation)))
def test_place_time_never_fails_on_odd_text(words: list[str], relation: TemporalRelation) -> None:
    text = " ".join(words)
    out = place_time(text, relation, TimePoint(2010, 5, 4))
    assert out is None or "2010-05-04" in out


def test_rewrite_modes() -> None:
    given: list[object] = [True, False, "kg", "LLM", "off", "false"]
    modes = [TimeR4Config.model_validate({"rewrite": v}).rewrite for v in given]
    assert modes == ["auto", "off", "kg", "llm", "off", "off"]  # booleans: the former setting
    with pytest.raises(ConfigError, match="rewrite mode"):
        TimeR4Method(rewrite="sometimes")
    assert method(FakeLLM(["x"])).rewrite_mode() is RewriteMode.LLM
    assert method().rewrite_mode() is RewriteMode.KG
    assert resolve_method("timer4:kg_rewrite", llm=FakeLLM(["x"])).rewrite_mode() is RewriteMode.KG  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="needs an LLM"):
        method(rewrite="llm").rewrite(IMPLICIT, [], rewrite_kg())
    assert method(rewrite="off").rewrite(IMPLICIT, [], rewrite_kg()).step["skipped"] == "disabled"


def test_answer_with_kg_rewrite_traces_the_time(kg: TemporalKG, home: Path) -> None:
    llm = FakeLLM(["['France']"])
    answer = method(llm, rewrite="kg").answer(Question(qid="q", text=IMPLICIT), kg)
    assert answer.answers == ["France"] and len(llm.requests) == 1  # the reasoning call only
    rewrite, tks = answer.trace[1], answer.trace[2]
    assert rewrite["mode"] == "kg" and rewrite["time"] == "2006-02-22" and rewrite["rewritten"] == EXPLICIT
    assert tks["time_constraint"] == "after 2006-02-22" and tks["facts"][0].startswith("France")
    assert llm.requests[0].messages[0].content.count(EXPLICIT) == 1


def test_rerank_orders_by_phi_t(kg: TemporalKG) -> None:
    stages = method().retrieve(IMPLICIT, kg, rewritten=EXPLICIT, k=7)
    reranked = [s.fact.subject for s in stages.tks_rerank]
    assert reranked[:3] == ["France", "Japan", "Germany"]  # after 2006-02-22, closest first
    assert {s.fact.subject for s in stages.tks_rerank[-3:]} == {"Juan_Carlos_I", "Vietnam", "China"}
    assert all(s.time_score is not None for s in stages.tks_rerank)
    assert stages.tks_rerank[-1].time_score == -100.0  # Eq. 9's penalty
    assert all(s.time_score is None for s in stages.tks)
    assert [s.fact for s in stages.fks] == [s.fact for s in method().retrieve(IMPLICIT, kg, k=7).fks]


def test_ablations_via_spec(kg: TemporalKG, home: Path) -> None:
    m = resolve_method("timer4:no_rewrite,no_rerank,embedder=hashing", llm=FakeLLM(["['Italy']"]))
    assert isinstance(m.config, TimeR4Config)
    assert (m.config.rewrite, m.config.rerank, m.config.temporal_retrieval) == ("off", False, True)
    answer = m.answer(Question(qid="q", text=IMPLICIT), kg)
    assert answer.trace[1]["skipped"] == "disabled" and answer.trace[2]["rerank"] is False
    wo_tr = resolve_method("timer4:wo_temporal_retrieval", tks_embedder="hashing:64", embedder="hashing")
    assert isinstance(wo_tr, TimeR4Method) and wo_tr.tks is wo_tr.fks
    with_tr = resolve_method("timer4", tks_embedder="hashing:64", embedder="hashing")
    assert isinstance(with_tr, TimeR4Method) and with_tr.tks.embedder.dim == 64
    with pytest.raises(ConfigError):
        resolve_method("timer4:no_such_thing")


def test_answer_parsing_is_safe() -> None:
    assert parse_answers("['Citizen (Thailand)', \"Armed Gang (Thailand)\"]") == [
        "Citizen (Thailand)",
        "Armed Gang (Thailand)",
    ]
    hostile = parse_answers("[__import__('os').system('touch pwned')]")  # parsed as text, never evaluated
    assert all(isinstance(a, str) for a in hostile) and not Path("pwned").exists()
    assert parse_answers("1. Iran\n2. Iraq") == ["Iran", "Iraq"]


def test_timer4_needs_an_llm_to_answer(kg: TemporalKG) -> None:
    with pytest.raises(ConfigError):
        method().answer(Question(qid="q", text=IMPLICIT), kg)


def test_entity_scope_on_larger_kgs(kg: TemporalKG) -> None:
    m = method(scope="entities")
    ids, scope, entities = m.scope(Question(qid="q", text="Who praised Japan?", entities=["Japan"]), kg)
    assert scope == "entities-1hop" and entities == ["Japan"] and ids is not None and len(ids) == 1
    ids, scope, _ = m.scope(Question(qid="q", text="Praise or endorse events?"), kg)
    assert scope == "bm25" and ids
    assert method(preset="ours").scope(IMPLICIT, kg)[1] == "all"  # ours: small KGs scored whole
    assert method().scope(IMPLICIT, kg)[:2] == (None, "kg")  # paper: the whole-KG index, no entity linking


def test_coverage_per_stage(kg: TemporalKG) -> None:
    q = Question(qid="q", text=IMPLICIT, answers=["Italy"])
    cov = question_coverage(method(), q, kg, ns=(1, 7))
    assert set(cov.covered) == {"fks", "tks", "tks_rerank"}
    assert cov.covered["fks"][7] and cov.rewritten  # offline KG rewrite without an LLM
    assert cov.rewrite["mode"] == "kg" and cov.time_constraint == "after 2006-02-22"
    off = question_coverage(method(rewrite="off"), q, kg, ns=(7,))
    assert not off.rewritten and off.time_constraint is None  # "first" after an unresolved event: no φ_t
    time_q = Question(qid="t", text="When did Italy praise Juan Carlos I?", answers=["2007-08"])
    assert question_coverage(method(), time_q, kg, ns=(7,)).covered["tks"][7]  # day fact covers the month


def test_export_instruction_data(kg: TemporalKG, tmp_path: Path, home: Path) -> None:
    qs = [Question(qid="q1", text=EXPLICIT, answers=["France"]), Question(qid="q2", text="Who?", answers=[])]
    out = tmp_path / "sft.jsonl"
    report = export_instruction_data(qs, kg, out, split="train", method=method())
    assert (report.rows, report.skipped) == (1, 1)
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert set(row) == {"qid", "question", "rewritten_question", "facts", "prompt", "answer", "answers"}
    assert row["answer"] == '["France"]' and row["facts"][0].startswith("France Praise or endorse")
    assert row["prompt"].startswith("Based on the historical facts") and len(row["facts"]) == 7
    with pytest.raises(ConfigError):
        export_instruction_data(qs, kg, out, split="test")


def test_timer4_on_demo_kg(home: Path) -> None:
    from tkgqa.datasets.demo import load_demo_questions
    from tkgqa.kg.loaders import load_demo_kg

    demo = load_demo_kg()
    q = next(q for q in load_demo_questions() if q.qid == "demo-001")
    llm = FakeLLM([q.text, "['Barack Obama']"])  # the rewrite leaves the question as it is
    answer = method(llm).answer(q, demo)
    assert answer.answers == ["Barack Obama"] and len(answer.evidence) == 15
    cov = question_coverage(method(), q, demo)
    assert cov.covered["tks_rerank"][15]
