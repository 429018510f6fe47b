"""CIK-LLM faithful by default: the ``paper`` preset and ``ours``, footnote 2's time rule, what happens
above δ2, the relation cap, snapshots without future information. Hand-written KGs and FakeLLM only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tkgqa.datasets.base import Question
from tkgqa.errors import ConfigError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.llm.base import LLMRequest
from tkgqa.methods import resolve_method
from tkgqa.methods.cik import (
    CIKConfig,
    CIKMethod,
    CIKStream,
    Delta2Rule,
    EvidenceFact,
    Preset,
    TimePruning,
    anchor_spans,
    near_anchors,
    time_aware_prune,
    truncate_hops,
)
from tkgqa.methods.cik.config import PRESETS
from tkgqa.methods.cik.pruning import lifetime_window
from tkgqa.outcomes import AbstainReason, ResultRow
from tkgqa.testing import FakeLLM
from tkgqa.time import parse_time

MSOT = "member_of_sports_team"


def football() -> TemporalKG:
    return TemporalKG(
        [
            Fact.of("Darren_Anderton", MSOT, "Portsmouth_F.C.", "1990", "1992"),
            Fact.of("Darren_Anderton", MSOT, "Tottenham_Hotspur_F.C.", "1992", "2004"),
            Fact.of("Darren_Anderton", MSOT, "Birmingham_City_F.C.", "2004", "2005"),
            Fact.of("Glenn_Hoddle", "head_coach", "Tottenham_Hotspur_F.C.", "2001", "2003"),
        ],
        name="football",
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def question(text: str, entities: list[str] | None = None) -> Question:
    return Question(qid="q", text=text, entities=entities or [])


# --- presets ---------------------------------------------------------------------------------------
def test_paper_preset_is_the_default_and_has_no_deviation() -> None:
    method = CIKMethod()
    c = method.config
    assert c.preset is Preset.PAPER
    assert (c.elide_times, c.time_pruning, c.delta2_rule, c.fallback, c.max_relations_per_hop) == (
        False,
        TimePruning.FOOTNOTE,
        Delta2Rule.NONE,
        False,
        0,
    )
    assert c.layout == "flat" and (c.hops, c.delta1, c.delta2, c.margin_days) == (3, 300, 30, 365)
    described = method.describe()
    assert described["preset"] == "paper" and described["deviations"] == []
    assert described["unspecified_by_paper"] and described["config"]["time_pruning"] == "footnote"
    assert method.requested.time_pruning is None  # unset: the preset's value


def test_ours_preset_and_explicit_settings_are_reported() -> None:
    ours = resolve_method("cik:ours")
    assert isinstance(ours.config, CIKConfig)
    assert ours.config.layout == "tree" and ours.config.delta2_rule is Delta2Rule.PHI_T
    assert len(ours.describe()["deviations"]) == len(PRESETS[Preset.OURS])
    mixed = resolve_method("cik:paper,delta2_rule=hops,nocompress")
    assert isinstance(mixed.config, CIKConfig)
    found = mixed.describe()["deviations"]
    assert any(d.startswith("delta2_rule=hops") and "paper:" in d for d in found)
    assert any(d.startswith("compress=false") for d in found)
    assert mixed.config.layout == "plain" and mixed.config.time_pruning is TimePruning.FOOTNOTE
    assert (
        CIKConfig(max_relations_per_hop=60).effective().deviations()[0].startswith("max_relations_per_hop=60")
    )
    assert not CIKConfig().effective().paper_value_deviations()
    off_paper = CIKConfig(hops=2, margin_days=30).effective()
    assert off_paper.paper_value_deviations() == ["hops=2 (paper: 3)", "margin_days=30 (paper: 365)"]
    assert set(off_paper.paper_value_deviations()) <= set(off_paper.deviations())
    with pytest.raises(ConfigError):
        resolve_method("cik:delta2_rule=bogus")


# --- footnote 2 vs the lifetime window -------------------------------------------------------------
def test_footnote_rule_keeps_facts_near_some_question_entity_fact() -> None:
    kg = TemporalKG(
        [
            Fact.of("Q", "r", "x", "2000"),
            Fact.of("Q", "r", "y", "2010"),
            Fact.of("x", "s", "a", "2001-06"),  # within a year of the 2000 fact
            Fact.of("x", "s", "b", "2005"),  # more than a year from both: dropped
            Fact.of("x", "s", "c", "2009-03"),  # within a year of the 2010 fact
            Fact("x", "s", "d"),  # no time: nothing to measure, kept
        ]
    )
    anchors = anchor_spans(kg, ["Q"])
    assert anchors is not None
    items = [EvidenceFact("Q", 2, f, f.object) for f in kg.facts(relation="s")]
    kept = {it.fact.object for it in time_aware_prune(items, several_entities=False, anchors=anchors)}
    assert kept == {"a", "c", "d"}
    # The lifetime window (ours) is 1999..2011: it keeps the 2005 fact the footnote drops.
    window = lifetime_window(kg, ["Q"])
    assert {it.fact.object for it in time_aware_prune(items, window, several_entities=False)} == set("abcd")
    assert near_anchors(Fact.of("z", "s", "w", "1990", "2020"), anchors)  # a long interval meets them
    assert anchor_spans(TemporalKG([Fact("Q", "r", "x")]), ["Q"]) is None  # no timed fact: no pruning


def test_footnote_rule_treats_open_ends_as_still_true() -> None:
    kg = TemporalKG([Fact("Q", "r", "x", parse_time("2000"), None), Fact.of("x", "s", "late", "2015")])
    anchors = anchor_spans(kg, ["Q"])
    assert anchors is not None and near_anchors(kg.facts(relation="s")[0], anchors)


# --- above δ2 -----------------------------------------------------------------------------------------
def _items(hop: int, n: int, rel: str = "r") -> list[EvidenceFact]:
    return [
        EvidenceFact("Q", hop, Fact.of(f"a{hop}_{i}", rel, "b", f"2010-01-{1 + i % 28:02d}"))
        for i in range(n)
    ]


def test_truncate_hops_reuses_stage_one_with_delta2() -> None:
    items = _items(1, 20) + _items(2, 15) + _items(3, 5)
    assert [it.hop for it in truncate_hops(items, 30)] == [1] * 20
    assert len(truncate_hops(items, 41)) == 40  # already below δ2
    assert len(truncate_hops(_items(1, 50), 30)) == 50  # the 1-hop set is never cut


def star_kg(n: int) -> TemporalKG:
    """Q with ``n`` "visit" facts, one a day."""
    return TemporalKG(
        [Fact.of("Q", "visit", f"E{i}", f"2010-{1 + i // 28:02d}-{1 + i % 28:02d}") for i in range(n)]
    )


@pytest.mark.parametrize(("spec", "n_pruned"), [("cik", 45), ("cik:delta2_rule=hops", 45), ("cik:ours", 30)])
def test_delta2_rules(spec: str, n_pruned: int) -> None:
    method = resolve_method(spec)
    assert isinstance(method, CIKMethod)
    stages = method.evidence(question("Whom did Q visit?", ["Q"]), star_kg(45), use_llm=False)
    assert len(stages.pruned) == n_pruned
    assert stages.over_delta2 is (n_pruned > 30) and stages.trace()["over_delta2"] is (n_pruned > 30)


# --- the relation cap in Π_esg ----------------------------------------------------------------------
def test_relation_cap_is_an_option(home: Path) -> None:
    kg = TemporalKG([Fact.of("Q", f"rel_{i:03d}", f"E{i}", "2010") for i in range(70)])

    def d1_count(spec: str) -> int:
        llm = FakeLLM(['[["rel 000"]]', 'Final answer: ["e1"]'])
        resolve_method(spec, llm=llm).answer(question("Q?", ["Q"]), kg)
        return len(re.findall(r'"rel \d+"', llm.requests[0].messages[0].content.split("2) ")[-1]))

    assert d1_count("cik") == 70  # the paper: every relation
    assert d1_count("cik:ours") == 60
    assert d1_count("cik:max_relations_per_hop=5") == 5


# --- snapshots: no future information -----------------------------------------------------------------
def latest_responder(request: LLMRequest) -> str:
    text = request.messages[-1].content.rsplit("Now it's your turn", 1)[-1]
    if "Expected output:" in text:
        return '[["member of sports team"]]'
    tails = re.findall(r"\b(e\d+)\b", text.rsplit("Evidence set:", 1)[-1])
    return f'Final answer: ["{tails[-1]}"]' if tails else "Final answer: []"


def test_snapshot_prompt_shows_no_end_after_the_cutoff(home: Path) -> None:
    llm = FakeLLM(latest_responder)
    stream = CIKStream(football(), CIKMethod(llm=llm))
    q = question("What was the last team of Darren Anderton?", ["Darren_Anderton"])
    assert stream.answer(q, "2000").answers == ["Tottenham Hotspur F.C."]
    evidence = llm.requests[-1].messages[0].content.rsplit("Evidence set:", 1)[-1]
    assert "2004" not in evidence and "2005" not in evidence
    assert '"R1(X1,e2,1992,..)"' in evidence  # Tottenham: still true in 2000 (open end)
    assert stream.answer(q).answers == ["Birmingham City F.C."]  # K_all


def test_lifetime_window_keeps_an_entity_alive_while_a_fact_runs() -> None:
    """In K<2000 the Tottenham spell is open ("still true"): the lifetime runs on, not to its 1992 start."""
    snap = football().as_of("2000")
    window = lifetime_window(snap, ["Darren_Anderton"])
    assert window is not None and window[1] > parse_time("2100").first_day
    live = lifetime_window(football(), ["Darren_Anderton"])
    assert live == (parse_time("1990").first_day - 365, parse_time("2005").last_day + 365)


def test_esg_prompt_over_the_context_is_a_counted_token_limit(home: Path) -> None:
    from tkgqa.errors import ContextWindowError

    def too_long(request: LLMRequest) -> str:
        raise ContextWindowError("prompt too long for n_ctx=4096")

    answer = CIKMethod(llm=FakeLLM(too_long)).answer(
        question("Darren Anderton?", ["Darren_Anderton"]), football()
    )
    assert answer.abstained and "context window" in answer.reason_text
    assert answer.reason is not None and answer.reason.kind is AbstainReason.PATH_SELECTION_FAILED
    summary = CIKMethod().report_metrics([ResultRow(trace=answer.trace, reason=answer.reason_text)])
    assert summary["abstained_token_limit"] == summary["abstained_path_selection_failed"] == 1
