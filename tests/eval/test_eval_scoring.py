"""Scoring rules: normalisation, strict/lenient hits, set metrics, breakdowns, McNemar."""

from __future__ import annotations

import math
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tkgqa.datasets import Question
from tkgqa.eval.scoring import (
    Gold,
    breakdown,
    gold_rank,
    lenient_hit,
    mcnemar,
    normalize_answer,
    normalize_text,
    score_answer,
    set_scores,
    strict_hit,
)
from tkgqa.outcomes import ResultRow


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("May 2012", "2012-05"),
        ("Jun 25th, 2006", "2006-06-25"),
        ("2012-05", "2012-05"),
        ("1994-03-01T00:00:00Z", "1994-03-01"),
        ("in 2015", "2015"),
        ("march-2015", "2015-03"),
        ("Citizen_(North_Korea)", "citizen north korea"),
        ("Citizen (North Korea)", "citizen north korea"),
        ("  Ségolène   Royal ", "segolene royal"),
        ("A.C. Milan", "a c milan"),
        ("Q76", "q76"),
    ],
)
def test_normalize_answer(raw: str, normal: str) -> None:
    assert normalize_answer(raw) == normal


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_normalization_is_idempotent(text: str) -> None:
    once = normalize_answer(text)
    assert normalize_answer(once) == once
    t = normalize_text(text)
    assert normalize_text(t) == t


@settings(max_examples=100, deadline=None)
@given(
    st.dates(min_value=date(1000, 1, 1)), st.sampled_from(["%Y", "%Y-%m", "%Y-%m-%d", "%B %Y", "%b %d, %Y"])
)
def test_times_normalize_at_written_granularity(day: date, fmt: str) -> None:
    iso = normalize_answer(day.strftime(fmt))
    assert iso == day.isoformat()[: {"%Y": 4, "%Y-%m": 7, "%B %Y": 7}.get(fmt, 10)]


def test_strict_hits_no_coarsening_and_ranks() -> None:
    month = Gold.of(["2012-05"])
    assert strict_hit(["May 2012"], month)
    assert not strict_hit(["2012-05-03"], month)  # a day for a month question is a miss
    assert not strict_hit(["2012"], month)
    gold = Gold.of(["Jack Straw"], ["Jack_Straw"])
    assert gold_rank(["Iraq", "jack_straw"], gold) == 2
    assert not strict_hit(["Iraq", "Jack Straw"], gold, k=1)
    assert strict_hit(["Iraq", "Jack Straw"], gold, k=2)
    assert gold_rank([], gold) is None


def test_qid_and_label_both_count() -> None:
    gold = Gold.of(["Barack Obama"], ["Q76"])
    assert strict_hit(["Q76"], gold) and strict_hit(["barack obama"], gold)
    labels = {"Q999": "Barack Obama"}
    assert strict_hit(["Q999"], gold, label=lambda n: labels.get(n, n))
    assert not strict_hit(["Q999"], gold)
    # ids that do not align with answers still count as spellings of every answer
    assert strict_hit(["Q1"], Gold.of(["A", "B"], ["Q1"]))

    def broken(name: str) -> str:
        raise KeyError(name)

    assert strict_hit(["Barack Obama"], gold, label=broken)


def test_lenient_substring_rule() -> None:
    gold = Gold.of(["Iran"])
    assert lenient_hit([], "The answer is Iranian officials.", gold)
    assert lenient_hit(["Iraq", "Iran"], "", gold)
    assert not lenient_hit(["Iraq"], "nothing", gold)
    assert lenient_hit([], "It was in 2012-05-03.", Gold.of(["2012"]))
    assert not lenient_hit([], "", Gold.of([]))
    q = Question(qid="1", text="?", answers=["Iran"])
    s = score_answer(q, ["Iraq"], raw_output="Iran or Iraq")
    assert (s.strict_hit, s.lenient_hit, s.rank) == (False, True, None)


def test_set_scores() -> None:
    gold = Gold.of(["A", "B", "C"])
    s = set_scores(["a", "b", "x", "a"], gold)
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(2 / 3) and not s.exact
    assert set_scores(["C", "B", "A"], gold).exact
    assert set_scores([], gold) == set_scores(["A"], Gold.of([]))
    assert set_scores([], gold).f1 == 0.0


def row(hit: bool, **fields: object) -> ResultRow:
    return ResultRow.from_json({"strict_hit": hit, "lenient_hit": hit, "f1": float(hit), **fields})


def test_breakdown_multitq() -> None:
    rows = [
        row(True, qlabel="Single", answer_type="entity", qtype="equal", time_level="day"),
        row(False, qlabel="Single", answer_type="time", qtype="first_last", time_level="year"),
        row(True, qlabel="Multiple", answer_type="entity", qtype="after_first", time_level="month"),
    ]
    b = breakdown(rows, "multitq")
    assert list(b) == ["overall", "qlabel", "answer_type", "qtype", "time_level"]
    assert b["overall"]["n"] == 3 and b["overall"]["strict_hits@1"] == pytest.approx(2 / 3)
    assert list(b["qlabel"]) == ["Single", "Multiple"] and b["qlabel"]["Single"]["strict_hits@1"] == 0.5
    assert list(b["qtype"]) == ["equal", "first_last", "after_first"]
    assert list(b["time_level"]) == ["year", "month", "day"]


def test_breakdown_cronquestions_and_timequestions() -> None:
    cron = [row(True, qtype="simple_entity"), row(False, qtype="time_join"), row(True, qtype="simple_time")]
    b = breakdown(cron, "cronquestions")
    assert b["complexity"]["simple"] == {"n": 2, "strict_hits@1": 1.0, "lenient_hits@1": 1.0, "f1": 1.0}
    assert b["complexity"]["complex"]["strict_hits@1"] == 0.0
    assert list(b["qtype"]) == ["simple_entity", "simple_time", "time_join"]
    tq = [row(True, types=["Ordinal", "Explicit"]), row(False, types=["Explicit"]), row(True, types=[])]
    b = breakdown(tq, "timequestions")
    assert list(b["types"]) == ["Explicit", "Ordinal"]
    assert b["types"]["Explicit"]["n"] == 2 and b["types"]["Ordinal"]["strict_hits@1"] == 1.0
    assert b["overall"]["n"] == 3
    assert breakdown([], "multitq") == {"overall": {"n": 0, "strict_hits@1": 0.0, "lenient_hits@1": 0.0}}


def test_mcnemar_exact_known_values() -> None:
    a = [True] * 10 + [False] * 2 + [True] * 5
    b = [False] * 10 + [True] * 2 + [True] * 5
    r = mcnemar(a, b)
    assert (r.b, r.c, r.method, r.n) == (10, 2, "exact", 17)
    assert r.p_value == pytest.approx(2 * (1 + 12 + 66) / 4096)  # 0.0386
    assert mcnemar([True], [True]).p_value == 1.0
    assert mcnemar([True, False], [False, True]).p_value == 1.0


def test_mcnemar_chi2_known_values() -> None:
    a = [True] * 30 + [False] * 10
    b = [False] * 30 + [True] * 10
    r = mcnemar(a, b)
    assert (r.b, r.c, r.method) == (30, 10, "chi2")
    assert r.statistic == pytest.approx(9.025)
    assert r.p_value == pytest.approx(math.erfc(math.sqrt(9.025 / 2)))
    assert r.p_value == pytest.approx(0.002663, abs=1e-5)
    with pytest.raises(ValueError):
        mcnemar([True], [])


def test_mcnemar_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for only_a, only_b in [(3, 9), (0, 7), (11, 12)]:
        a = [True] * only_a + [False] * only_b
        b = [False] * only_a + [True] * only_b
        expected = stats.binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue
        assert mcnemar(a, b).p_value == pytest.approx(expected)
    a = [True] * 40 + [False] * 20
    b = [False] * 40 + [True] * 20
    assert mcnemar(a, b).p_value == pytest.approx(stats.chi2.sf((20 - 1) ** 2 / 60, 1))
