"""CIK-LLM: relation discovery, path validation, traversal, pruning, compression, the stream, K′ — all on
small hand-written KGs and the bundled demo KG, with FakeLLM (no network, no model)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tkgqa.datasets.base import Question
from tkgqa.errors import ConfigError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.llm.base import LLMRequest
from tkgqa.llm.tokens import count_tokens
from tkgqa.methods import resolve_method
from tkgqa.methods.cik import (
    CIKConfig,
    CIKMethod,
    CIKStream,
    EvidenceFact,
    cap_facts,
    decompress_evidence,
    multi_hop_truncation,
    relations_at_distance,
    render_compressed,
    render_plain,
    time_aware_prune,
    traverse,
    validate_path,
)
from tkgqa.methods.cik.prompts import parse_relation_paths, parse_rog_answer
from tkgqa.methods.cik.pruning import lifetime_window, longest_per_relation_tail
from tkgqa.outcomes import ResultRow
from tkgqa.retrieval.temporal import TimeConstraint
from tkgqa.testing import FakeLLM
from tkgqa.time import parse_time

MSOT = "member_of_sports_team"


def football_facts() -> list[Fact]:
    return [
        Fact.of("Darren_Anderton", MSOT, "Portsmouth_F.C.", "1990", "1992"),
        Fact.of("Darren_Anderton", MSOT, "Tottenham_Hotspur_F.C.", "1992", "2004"),
        Fact.of("Darren_Anderton", MSOT, "Birmingham_City_F.C.", "2004", "2005"),
        Fact.of("Darren_Anderton", "award_received", "PFA_Team_of_the_Year", "1993"),
        Fact.of("Glenn_Hoddle", "head_coach", "Tottenham_Hotspur_F.C.", "2001", "2003"),
        Fact.of("Glenn_Hoddle", MSOT, "Tottenham_Hotspur_F.C.", "1975", "1987"),
        Fact.of("Glenn_Hoddle", "award_received", "Ballon_Star", "1980"),
        Fact.of("Ernesto_Castano", MSOT, "Juventus_F.C.", "1958", "1970"),
    ]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def football() -> TemporalKG:
    return TemporalKG(football_facts(), name="football")


def question(text: str, answers: list[str] | None = None, entities: list[str] | None = None) -> Question:
    return Question(qid="q", text=text, answers=answers or [], entities=entities or [])


# --- relation discovery, validation, traversal ----------------------------------------------------
def test_relations_at_distance_repeat_across_hops(football: TemporalKG) -> None:
    rels = relations_at_distance(football, "Darren_Anderton", 3)
    assert rels.at(1) == (MSOT, "award_received")
    assert set(rels.at(2)) == {MSOT, "head_coach"}  # Tottenham's facts: the same relation again
    assert set(rels.at(3)) == {"award_received"}  # Glenn Hoddle's other fact
    assert rels.at(4) == ()


def test_validate_path_drops_and_reports_invalid_relations(football: TemporalKG) -> None:
    rels = relations_at_distance(football, "Darren_Anderton", 3)
    labels = {r: football.label(r) for r in football.relations}
    check = validate_path("Darren_Anderton", ["member of sports team", "spouse", "head coach"], rels, labels)
    assert check.path == (MSOT,)
    assert check.dropped == ((2, "spouse"), (3, "head coach"))
    ok = validate_path("Darren_Anderton", ["Member Of Sports Team", "head coach", ""], rels, labels)
    assert ok.path == (MSOT, "head_coach") and ok.dropped == ()
    not_at_hop1 = validate_path("Darren_Anderton", ["head coach"], rels, labels)
    assert not_at_hop1.path == () and not_at_hop1.dropped == ((1, "head coach"),)


def test_traverse_follows_path_both_directions_and_falls_back(football: TemporalKG) -> None:
    walk = traverse(football, "Darren_Anderton", [MSOT, "head_coach"])
    assert [len(h) for h in walk.hops] == [3, 1]
    assert walk.hops[1][0].subject == "Glenn_Hoddle"  # reached backwards from Tottenham
    assert walk.reached[walk.hops[1][0]] == "Glenn_Hoddle"
    assert not walk.fallback
    empty = traverse(football, "Darren_Anderton", ["head_coach"])  # yields nothing from Darren
    assert empty.failed and empty.fallback and len(empty.hops) == 1 and len(empty.hops[0]) == 4
    none = traverse(football, "Darren_Anderton", ["head_coach"], fallback=False)
    assert none.failed and not none.fallback and none.hops == () and none.n_facts == 0
    assert not walk.failed


# --- pruning ---------------------------------------------------------------------------------------
def _points(n: int, rel: str = "r", year: int = 2010) -> list[Fact]:
    return [Fact.of(f"a{i}", rel, f"b{i}", f"{year}-01-{1 + i % 28:02d}") for i in range(n)]


def test_multi_hop_truncation_respects_delta1() -> None:
    hops = [_points(5), _points(10, "s"), _points(400, "t")]
    assert [len(h) for h in multi_hop_truncation(hops, 300)] == [5, 10]
    assert [len(h) for h in multi_hop_truncation([_points(250), _points(100, "s")], 300)] == [250]
    assert [len(h) for h in multi_hop_truncation([_points(500)], 300)] == [500]  # 1-hop only: skipped
    assert [len(h) for h in multi_hop_truncation([_points(5), _points(5, "s")], 300)] == [5, 5]


def test_time_aware_pruning_keeps_plus_minus_one_year() -> None:
    kg = TemporalKG(
        [
            Fact.of("Q", "r", "x", "2000", "2002"),
            Fact.of("x", "s", "y", "2003-06"),
            Fact.of("x", "s", "z", "2004-02"),
        ]
    )
    window = lifetime_window(kg, ["Q"])
    assert window is not None
    items = [EvidenceFact("Q", 2, f) for f in kg.facts(relation="s")]
    kept = time_aware_prune(items, window, several_entities=False)
    assert [it.fact.object for it in kept] == ["y"]  # 2003-06 is within a year of 2002, 2004-02 is not


def test_longest_lasting_fact_per_relation_and_tail() -> None:
    short = Fact.of("Q1", "spouse", "Y", "2000", "2001")
    long = Fact.of("Q1", "spouse", "Y", "2003", "2010")
    other = Fact.of("Q1", "spouse", "Z", "1990", "1991")
    items = [EvidenceFact("Q1", 1, f, "Y" if f.object == "Y" else "Z") for f in (short, long, other)]
    assert [it.fact for it in longest_per_relation_tail(items)] == [long, other]
    assert len(time_aware_prune(items, None, several_entities=True)) == 2
    assert len(time_aware_prune(items, None, several_entities=False)) == 3


def test_cap_delta2_prefers_near_hops_and_the_time_constraint() -> None:
    items = [EvidenceFact("Q", 2, f) for f in _points(10, year=2012)]
    items += [EvidenceFact("Q", 1, f) for f in _points(40, "near", year=2010)]
    kept = cap_facts(items, 30, None)
    assert len(kept) == 30 and all(it.hop == 1 for it in kept)
    before = [EvidenceFact("Q", 1, Fact.of("a", "r", f"b{y}", str(y))) for y in range(1990, 2010)]
    kept = cap_facts(before, 3, TimeConstraint.of("before", "2000"))
    assert sorted(it.fact.object for it in kept) == ["b1997", "b1998", "b1999"]


# --- evidence rendering and compression -----------------------------------------------------------
def test_plain_rendering_groups_by_entity_and_interval(football: TemporalKG) -> None:
    items = [EvidenceFact("Darren_Anderton", 1, f) for f in football.facts(subject="Darren_Anderton")]
    text = render_plain(items, football).text
    assert text.startswith('{"Darren Anderton": {"1990/1992": ["member of sports team(Darren Anderton,')
    assert "award received(Darren Anderton,PFA Team of the Year,1993,1993)" in text
    assert text.index('"1993"') < text.index('"2004/2005"')  # keys in time order


def _facts_of(items: list[EvidenceFact]) -> list[tuple[str, Fact]]:
    return sorted(((it.entity, it.fact) for it in items), key=repr)


def test_compression_round_trip(football: TemporalKG) -> None:
    items = [EvidenceFact("Darren_Anderton", 1, f) for f in football.facts(subject="Darren_Anderton")]
    rendered = render_compressed(items, football, ["Darren_Anderton"])
    amap = rendered.map
    assert amap is not None
    assert "Darren" not in rendered.text and "Tottenham" not in rendered.text
    assert rendered.text.startswith("X1:\n 1990/1992: R1(,e1)\n 1992/2004: R1(,e2)\n 1993: R2(,e3)\n")
    assert rendered.map_text.startswith("X1=Darren Anderton\nR1=member of sports team\n")
    assert "Tottenham" not in rendered.map_text  # non-question entities stay opaque, as in Listing 2
    assert sorted(decompress_evidence(rendered.text, amap), key=repr) == _facts_of(items)  # nothing lost
    for name, var in amap.entities.items():
        assert amap.decompress_answer(var) == football.label(name)
        assert amap.decompress_answer(f" {var} ") == football.label(name)
    assert amap.decompress_answer("1992") == "1992"
    assert "Tottenham Hotspur F.C." in amap.decompress(rendered.text)


def test_compressed_time_tree_round_trip_on_day_facts() -> None:
    items = synthetic_events(n_days=4)
    items.append(
        EvidenceFact("Foreign_Affairs_(Cambodia)", 1, Fact.of("Citizen_(Thailand)", "Praise", "X", "2012-05"))
    )
    rendered = render_compressed(items, None, ["Foreign_Affairs_(Cambodia)"])
    assert rendered.text.startswith("X1:\n 2012:\n  03:\n   01: R1(e1,) ")
    assert "\n  05:\n   ..: R4(e4,e6)" in rendered.text  # a month-level fact in a day-level tree
    assert rendered.map is not None
    assert sorted(decompress_evidence(rendered.text, rendered.map), key=repr) == _facts_of(items)


def test_compressed_round_trip_mixed_times_and_entities() -> None:
    """Several question entities, facts between other entities, self-loops, open/missing/BCE times."""
    a, b = "Entity_A", "Entity_B"
    raw = [
        (a, Fact(a, "r1", "o1", parse_time("2001-02-03"), parse_time("2001-02-03"))),
        (a, Fact("o1", "r2", "o2", parse_time("2001"), parse_time("2001"))),
        (a, Fact(a, "r1", a, parse_time("2001-02"), parse_time("2001-02"))),
        (a, Fact("o2", "r1", a, parse_time("1999"), None)),
        (a, Fact("o3", "r3", a, None, parse_time("2003-04-05"))),
        (a, Fact("o3", "r3", "o1", None, None)),
        (b, Fact("o1", "r2", b, parse_time("1990-05-06"), parse_time("1995-01"))),
        (b, Fact(b, "r4", a, parse_time("-0044-03-15"), parse_time("-0044-03-15"))),
        (b, Fact(b, "r4", "o4", parse_time("1990"), parse_time("1990"))),
    ]
    items = [EvidenceFact(e, 1, f) for e, f in raw]
    rendered = render_compressed(items, None, [a, b])
    assert rendered.map is not None
    assert sorted(decompress_evidence(rendered.text, rendered.map), key=repr) == _facts_of(items)
    assert "R3(e2,e3)" in rendered.text and "R2(,)" in rendered.text  # other-entity fact, self-loop


def test_paper_exact_compressed_form_keeps_times(football: TemporalKG) -> None:
    items = [EvidenceFact("Darren_Anderton", 1, f) for f in football.facts(subject="Darren_Anderton")]
    text = render_compressed(items, football, elide_times=False).text
    assert '"R1(X1,e1,1990,1992)"' in text


def synthetic_events(n_days: int = 10, per_day: int = 3) -> list[EvidenceFact]:
    """ICEWS-style facts around one question entity: long role names and CAMEO relation labels."""
    actors = [
        "Ministry_of_Foreign_Affairs_(South_Korea)",
        "Head_of_Government_(Japan)",
        "Defense_/_Security_Ministry_(Denmark)",
        "Citizen_(Thailand)",
        "Armed_Opposition_(Thailand)",
    ]
    relations = [
        "Express_intent_to_meet_or_negotiate",
        "Make_an_appeal_or_request",
        "Engage_in_diplomatic_cooperation",
    ]
    out = []
    for d in range(n_days):
        for k in range(per_day):
            f = Fact.of(
                actors[(d + k) % 5],
                relations[(d * k) % 3],
                "Foreign_Affairs_(Cambodia)",
                f"2012-03-{d + 1:02d}",
            )
            out.append(EvidenceFact("Foreign_Affairs_(Cambodia)", 1, f))
    return out


def test_compression_ratio_at_least_3x_at_equal_facts() -> None:
    items = synthetic_events()
    plain, comp = render_plain(items, None), render_compressed(items, None, ["Foreign_Affairs_(Cambodia)"])
    assert plain.n_facts == comp.n_facts == 30
    assert comp.map_tokens() > 0 and comp.tokens() == count_tokens(comp.text) + comp.map_tokens()
    assert plain.tokens() >= 3 * comp.tokens(), (plain.tokens(), comp.tokens())  # the map counted
    assert count_tokens(plain.text) >= 3 * count_tokens(comp.text)


# --- prompts' parsers ------------------------------------------------------------------------------
def test_parse_relation_paths_bare_and_quoted() -> None:
    assert parse_relation_paths('[[award received, winner, ""], [award received]]') == [
        ["award received", "winner", ""],
        ["award received"],
    ]
    assert parse_relation_paths('Output: [["Make a visit"]]') == [["Make a visit"]]
    assert parse_relation_paths("[member of sports team]") == [["member of sports team"]]


def test_parse_rog_answer_forms() -> None:
    assert parse_rog_answer('Since X1 ..., it is e3.\nFinal answer: ["e3"]') == ["e3"]
    assert parse_rog_answer("Answer: Since X1, the last team is e3.") == ["e3"]
    assert parse_rog_answer("Final answer: []") == []
    assert parse_rog_answer("Final answer: [1992, 'e2']") == ["1992", "e2"]


# --- the method end to end -------------------------------------------------------------------------
def last_tail_responder(request: LLMRequest) -> str:
    """Answers Π_esg with the first D1 relation and Π_rog with the latest entity variable."""
    text = request.messages[-1].content
    own = text.rsplit("Now it's your turn", 1)[-1]
    if "Expected output:" in own:
        d1 = re.findall(r'"D1": \["([^"]+)"', own)
        return "[" + ", ".join(f'["{r}"]' for r in d1) + "]"
    evidence = text.rsplit("Evidence set:", 1)[-1]
    tails = re.findall(r"\b(e\d+)\b", evidence)
    return f'It is the latest one.\nFinal answer: ["{tails[-1]}"]' if tails else "Final answer: []"


def test_cik_end_to_end_with_fake_llm(football: TemporalKG, home: Path) -> None:
    llm = FakeLLM(['[["member of sports team", "spouse"]]', 'The last team is e3.\nFinal answer: ["e3"]'])
    method = CIKMethod(llm=llm)
    q = question("What was the last team of Darren Anderton?", ["Birmingham City F.C."])
    answer = method.answer(q, football)
    assert answer.answers == ["Birmingham City F.C."]
    evidence_step = answer.trace[0]
    assert evidence_step["entities"] == ["Darren_Anderton"]
    assert evidence_step["paths"][0]["path"] == [MSOT]
    assert evidence_step["paths"][0]["dropped"] == [[2, "spouse"]]  # invalid relation dropped and reported
    assert answer.usage.to_dict()["llm_calls"] == 2
    rog = llm.requests[1].messages[0].content
    own = rog.split("Now it's your turn!")[-1]
    assert "Associative map: X1=Darren Anderton; R1=member of sports team" in own  # the paper's form
    assert '"R1(X1,e3,2004,2005)"' in own and "Tottenham" not in own  # times kept in every term
    assert answer.trace[1]["layout"] == "flat"


def test_cik_tree_layout_is_our_option(football: TemporalKG, home: Path) -> None:
    for spec in ("cik:tree", "cik:ours"):
        llm = FakeLLM(['[["member of sports team"]]', 'Final answer: ["e3"]'])
        answer = resolve_method(spec, llm=llm).answer(question("Last team of Darren Anderton?"), football)
        own = llm.requests[1].messages[0].content.split("Now it's your turn!")[-1]
        assert "Associative map:\nX1=Darren Anderton\nR1=member of sports team" in own
        assert "X1:\n 1990/1992: R1(,e1)" in own and answer.answers == ["Birmingham City F.C."]


def test_cik_invalid_path_is_a_failed_path_selection(football: TemporalKG, home: Path) -> None:
    """The paper's preset: no facts for that entity; no entity has any → abstain, counted (Table 2)."""
    llm = FakeLLM(['[["not a relation"]]'])
    answer = CIKMethod(llm=llm).answer(question("Darren Anderton?"), football)
    step = answer.trace[0]
    assert answer.abstained and answer.reason_text.startswith("path selection failed")
    assert step["path_failed"] == ["Darren_Anderton"] and step["fallback"] == []
    assert step["paths"][0]["dropped"] == [[1, "not a relation"]] and step["counts"]["retrieved"] == 0
    assert len(llm.requests) == 1  # Π_rog never asked
    summary = CIKMethod().report_metrics([ResultRow(trace=answer.trace, reason=answer.reason_text)])
    assert summary["path_selection_failed"] == summary["abstained_path_selection_failed"] == 1
    assert summary["fallback_used"] == 0


def test_cik_invalid_path_falls_back_to_one_hop_when_asked(football: TemporalKG, home: Path) -> None:
    llm = FakeLLM(['[["not a relation"]]', 'Final answer: ["e1"]'])
    method = resolve_method("cik:fallback", llm=llm)
    answer = method.answer(question("Darren Anderton?"), football)
    step = answer.trace[0]
    assert step["fallback"] == ["Darren_Anderton"] and step["path_failed"] == ["Darren_Anderton"]
    assert step["counts"]["retrieved"] == 4  # every 1-hop fact
    assert not answer.abstained
    assert any("fallback=true" in d for d in method.describe()["deviations"])
    summary = CIKMethod().report_metrics([ResultRow(trace=answer.trace, reason=answer.reason_text)])
    assert summary["fallback_used"] == summary["path_selection_failed"] == 1
    assert summary["abstained_path_selection_failed"] == 0


def test_cik_uncompressed_prompt(football: TemporalKG, home: Path) -> None:
    llm = FakeLLM(['[["member of sports team"]]', 'Final answer: ["Birmingham City F.C."]'])
    method = resolve_method("cik:nocompress", llm=llm)
    answer = method.answer(question("Last team of Darren Anderton?"), football)
    assert answer.answers == ["Birmingham City F.C."]
    assert (
        "member of sports team(Darren Anderton,Birmingham City F.C.,2004,2005)"
        in llm.requests[1].messages[0].content
    )


def test_cik_without_llm_raises_but_evidence_runs_offline(football: TemporalKG) -> None:
    method = CIKMethod()
    with pytest.raises(ConfigError):
        method.answer(question("Last team of Darren Anderton?"), football)
    stages = method.evidence(question("Which sports team was Darren Anderton a member of?"), football)
    assert stages.paths[0].path == (MSOT,)  # lexical policy
    assert len(stages.pruned) == 3


def test_cik_unknown_question_entity_abstains(football: TemporalKG, home: Path) -> None:
    answer = CIKMethod(llm=FakeLLM([])).answer(question("Who is Zinedine Zidane?"), football)
    assert answer.abstained and answer.reason_text


def test_cik_config_and_spec() -> None:
    m = resolve_method("cik:lexical,delta2=10")
    assert isinstance(m.config, CIKConfig) and m.config.delta2 == 10 and m.config.path_policy == "lexical"
    assert (m.config.delta1, m.config.hops) == (300, 3)
    with pytest.raises(ConfigError):
        resolve_method("cik:bogus")


def test_cik_on_demo_kg(home: Path) -> None:
    from tkgqa.datasets.demo import load_demo_questions
    from tkgqa.kg.loaders import load_demo_kg

    kg = load_demo_kg()
    q = next(q for q in load_demo_questions() if q.qid == "demo-001")
    llm = FakeLLM(last_tail_responder)
    answer = CIKMethod(llm=llm).answer(q, kg)
    assert not answer.abstained and answer.answers
    assert all(not re.fullmatch(r"[XRe]\d+", a) for a in answer.answers)  # decompressed
    assert answer.evidence and answer.usage.to_dict()["llm_calls"] == 2


# --- the TKG stream ------------------------------------------------------------------------------
def test_stream_snapshots_and_appends_change_answers(home: Path) -> None:
    kg = TemporalKG(football_facts(), name="stream")
    method = CIKMethod(llm=FakeLLM(last_tail_responder))
    stream = CIKStream(kg, method)
    q = question("What was the last team of Darren Anderton?", entities=["Darren_Anderton"])
    results = stream.run([q], ["1960", "2000", None])
    first, middle, latest = (r.answer for r in results)
    assert first.abstained and "no information" in first.reason_text.lower()  # K<1960 knows nothing of him
    assert middle.answers == ["Tottenham Hotspur F.C."]
    assert latest.answers == ["Birmingham City F.C."]
    size = len(kg)
    stream.append([Fact.of("Darren_Anderton", MSOT, "Wolverhampton_Wanderers_F.C.", "2005", "2006")])
    assert len(kg) == size + 1
    assert stream.answer(q).answers == ["Wolverhampton Wanderers F.C."]  # the live store, no rebuild
    assert stream.answer(q, "2000").answers == ["Tottenham Hotspur F.C."]  # older snapshot unchanged


def test_stages_are_reported_as_step_events(football: TemporalKG, home: Path) -> None:
    from tkgqa.methods import StepEvent, StepKind, step_reporter

    events: list[StepEvent] = []
    llm = FakeLLM(['[["member of sports team"]]', 'Final answer: ["e3"]'])
    with step_reporter(events.append):
        CIKMethod(llm=llm).answer(question("What was the last team of Darren Anderton?"), football)
    assert [(e.method, e.kind, e.index) for e in events] == [
        ("cik", StepKind.STAGE, 0),
        ("cik", StepKind.STAGE, 1),
    ]
    assert events[0].label.startswith("evidence for 1 entities") and events[0].count and events[0].ok
    assert "tokens" in events[1].label
