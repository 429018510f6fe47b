from __future__ import annotations

from pathlib import Path

import pytest
from retrieval_helpers import CountingEmbedder, point_fact

from extras_marks import requires_extra
from tkgqa.errors import ConfigError
from tkgqa.kg import TemporalKG
from tkgqa.retrieval import Retriever, ScoredFact, TimeConstraint


@requires_extra("retrieval")
def test_retrieve_dense_top_k(home: Path, toy_kg: TemporalKG) -> None:
    r = Retriever("hashing")
    hits = r.retrieve("Barack Obama Make a visit China", toy_kg, k=3)
    assert len(hits) == 3 and all(isinstance(h, ScoredFact) for h in hits)
    assert hits[0].fact.subject == "Barack_Obama" and hits[0].fact.object == "China"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.time_score is None and h.score == h.sim for h in hits)
    assert hits[0].text.startswith("Barack Obama Make a visit China on")
    assert toy_kg.fact(hits[0].fact_id) == hits[0].fact
    assert list((home / "embeddings" / "indexes").iterdir())  # index persisted beside the cache


def test_time_rerank_picks_the_fact_on_the_right_side(home: Path, toy_kg: TemporalKG) -> None:
    r = Retriever("hashing", pool_size=2)  # the two Obama→China visits, then reranked by time
    q = "Barack Obama Make a visit China"
    before = r.retrieve(q, toy_kg, k=1, time_constraint=TimeConstraint.of("before", "2012"))[0]
    after = r.retrieve(q, toy_kg, k=1, time_constraint="after 2012")[0]
    assert before.fact.start is not None and before.fact.start.year == 2009
    assert after.fact.start is not None and after.fact.start.year == 2014
    assert before.time_score is not None
    assert before.score == pytest.approx(0.4 * before.sim + 0.6 * before.time_score)
    plain = r.retrieve(q, toy_kg, k=1, time_constraint=TimeConstraint.of("before", "2012"), rerank=False)[0]
    assert plain.time_score is None
    auto = r.retrieve("Barack Obama Make a visit China before 2012?", toy_kg, k=1, time_constraint="auto")[0]
    assert auto.fact == before.fact


def test_candidate_ids_scope_scoring(home: Path, toy_kg: TemporalKG) -> None:
    r = Retriever("hashing")
    ids = r.candidates_around(toy_kg, ["Angela_Merkel"])
    assert len(ids) == 2
    hits = r.retrieve("Barack Obama Make a visit China", toy_kg, k=5, candidate_ids=ids)
    assert {h.fact_id for h in hits} == set(ids)
    assert all("Angela_Merkel" in (h.fact.subject, h.fact.object) for h in hits)
    assert r.retrieve("x", toy_kg, candidate_ids=[]) == []
    with pytest.raises(ConfigError):
        r.retrieve("x", toy_kg, candidate_ids=[999])
    windowed = r.candidates_around(toy_kg, ["Barack_Obama"], time="2014")
    assert {toy_kg.fact(i).start.year for i in windowed} == {2014}  # type: ignore[union-attr]


def test_candidate_mode_embeds_only_the_candidates(home: Path, toy_kg: TemporalKG) -> None:
    counting = CountingEmbedder()
    r = Retriever(counting)
    ids = r.candidates_around(toy_kg, ["Vladimir_Putin"])
    r.retrieve("Putin China", toy_kg, k=2, candidate_ids=ids)
    assert counting.texts_seen == 1 + len(ids)  # the question + the candidates, not the whole KG


def test_index_is_loaded_not_rebuilt(home: Path, toy_kg: TemporalKG) -> None:
    first = CountingEmbedder()
    Retriever(first).warm(toy_kg)
    assert first.texts_seen == len(toy_kg)
    second = CountingEmbedder()
    hits = Retriever(second).retrieve("Obama China", toy_kg, k=2)
    assert second.texts_seen == 1 and len(hits) == 2  # only the question


def test_hybrid_and_numpy_index(home: Path, toy_kg: TemporalKG) -> None:
    r = Retriever("hashing", hybrid=True, index_kind="numpy", cache=False)
    hits = r.retrieve("Sign formal agreement", toy_kg, k=3)
    assert hits[0].fact.relation == "Sign_formal_agreement"
    assert all(-1.0 <= h.sim <= 1.0 for h in hits)
    scoped = r.retrieve("Sign formal agreement", toy_kg, k=2, candidate_ids=list(range(len(toy_kg))))
    assert scoped[0].fact.relation == "Sign_formal_agreement"


def test_appended_facts_are_seen(home: Path, toy_kg: TemporalKG) -> None:
    r = Retriever("hashing", index_kind="numpy")
    r.retrieve("Obama", toy_kg, k=1)
    toy_kg.add([point_fact("Emmanuel_Macron", "Praise_or_endorse", "Germany", "2017-05-15")])
    hits = r.retrieve("Emmanuel Macron Praise or endorse Germany", toy_kg, k=1)
    assert hits[0].fact.subject == "Emmanuel_Macron"


def test_bad_mu() -> None:
    with pytest.raises(ConfigError):
        Retriever("hashing", mu=2.0)


def test_first_last_without_a_time_is_not_reranked_by_default(home: Path) -> None:
    """The pool is the question's semantic neighbourhood, not its entities' facts: the first/last analogue
    (μ = 0.4) would rank the latest fact *by anyone* first. Off by default (paper §4.5: φ_t needs t_q)."""
    kg = TemporalKG(
        [
            point_fact("Yasuo_Fukuda", "Make_a_visit", "China", "2007-12-23"),
            point_fact("Yasuo_Fukuda", "Make_a_visit", "China", "2007-12-11"),
            point_fact("Shinzo_Abe", "Make_a_visit", "China", "2015-10-26"),
            point_fact("Taro_Aso", "Make_a_visit", "China", "2014-06-01"),
        ]
    )
    q = "When did Yasuo Fukuda last visit China?"
    plain = Retriever("hashing", index_kind="numpy", cache=False)
    assert plain.resolve_constraint(q, "auto") is None
    hits = plain.retrieve(q, kg, k=4, time_constraint="auto")
    assert hits[0].fact.subject == "Yasuo_Fukuda" and all(h.time_score is None for h in hits)
    assert plain.resolve_constraint(q, TimeConstraint("last")) == TimeConstraint("last")  # explicit: kept
    extremes = Retriever("hashing", index_kind="numpy", cache=False, rerank_extremes=True)
    assert extremes.resolve_constraint(q, "auto") == TimeConstraint("last")
    top = extremes.retrieve(q, kg, k=4, time_constraint="auto")[0]
    assert top.fact.subject == "Shinzo_Abe" and top.time_score == 1.0  # the failure mode the default avoids
    dated = plain.retrieve("Who visited China in 2014?", kg, k=1, time_constraint="auto")[0]
    assert dated.fact.subject == "Taro_Aso" and dated.time_score == 1.0  # a question time still reranks


def test_proximity_ranks_by_nearness_only_when_asked(home: Path) -> None:
    kg = TemporalKG(
        [
            point_fact("Japan", "Make_a_visit", "Iraq", "2005-01-10"),
            point_fact("Iran", "Make_a_visit", "Iraq", "2009-05-01"),
            point_fact("Jordan", "Make_a_visit", "Iraq", "2012-01-01"),
        ]
    )
    r = Retriever("hashing", index_kind="numpy", cache=False)
    last = r.retrieve("Who was the last to visit Iraq before 2010?", kg, k=3, time_constraint="auto")
    assert (
        last[0].fact.subject == "Iran" and last[-1].fact.subject == "Jordan"
    )  # nearest first; wrong side last
    plain = r.retrieve("Who visited Iraq before 2010?", kg, k=3, time_constraint="auto")
    assert {h.fact.subject for h in plain[:2]} == {"Japan", "Iran"} and plain[0].time_score == 1.0
    assert plain[-1].time_score == -100.0
    paper = Retriever("hashing", index_kind="numpy", cache=False, proximity="paper")
    assert (
        paper.retrieve("Who visited Iraq before 2010?", kg, k=1, time_constraint="auto")[0].fact.subject
        == "Iran"
    )
    with pytest.raises(ConfigError, match="proximity"):
        Retriever("hashing", proximity="closest")
