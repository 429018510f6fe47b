from __future__ import annotations

import pytest

from tkgqa.errors import ConfigError
from tkgqa.retrieval import BM25Retriever, rrf

CORPUS = [
    "a cat sat on the mat",
    "dogs chase cats in the park",
    "Barack Obama Make a visit China on 2014-05-03",
    "China Sign formal agreement Japan on 2013-01-01",
    "Barack Obama Consult Angela Merkel on 2012-02-02",
]


@pytest.mark.parametrize("backend", ["python", "bm25s"])
def test_bm25_ranks_lexical_matches(backend: str) -> None:
    if backend == "bm25s":
        pytest.importorskip("bm25s", reason="bm25s not installed (retrieval extra)")
    bm = BM25Retriever(CORPUS, backend=backend)  # type: ignore[arg-type]
    ids, scores = bm.search("Obama visit China", k=5)
    assert ids[0] == 2
    assert set(ids.tolist()) == {2, 3, 4}  # only documents sharing a term score > 0
    assert list(scores) == sorted(scores, reverse=True)
    assert len(bm.search("zebra", 3)[0]) == 0
    assert len(bm.search("the of", 3)[0]) == 0  # stop words only


def test_bm25_backends_agree() -> None:
    pytest.importorskip("bm25s", reason="bm25s not installed (retrieval extra)")
    a = BM25Retriever(CORPUS, backend="bm25s").search("Obama China agreement", 5)
    b = BM25Retriever(CORPUS, backend="python").search("Obama China agreement", 5)
    assert a[0].tolist() == b[0].tolist()
    assert a[1] == pytest.approx(b[1], rel=1e-4)


def test_bm25_empty_corpus_and_bad_backend() -> None:
    assert len(BM25Retriever([], backend="python").search("x")[0]) == 0
    with pytest.raises(ConfigError):
        BM25Retriever(CORPUS, backend="lucene")  # type: ignore[arg-type]


def test_rrf_values_and_order() -> None:
    fused = rrf([["a", "b", "c"], ["c", "b", "d"]], k=60)
    scores = dict(fused)
    assert scores["b"] == pytest.approx(2 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert [x for x, _ in fused] == ["c", "b", "a", "d"]


def test_rrf_ties_keep_first_appearance_and_duplicates_count_once() -> None:
    assert [x for x, _ in rrf([["x", "y"], ["y", "x"]])] == ["x", "y"]
    assert dict(rrf([["x", "x", "y"]], k=0)) == {"x": 1.0, "y": 1 / 3}
    with pytest.raises(ConfigError):
        rrf([["x"]], k=-1)
