"""Lexical retrieval (BM25) and reciprocal-rank fusion of several rankings.

:class:`BM25Retriever` uses ``bm25s`` (sparse matrices, Lucene BM25) and a small pure-Python Okapi BM25
with the same formula when bm25s is absent. Tokens: lowercase ``\\w\\w+`` minus English stop words, as
bm25s does by default. :func:`rrf` fuses rankings by ``Σ 1 / (k + rank)`` (Cormack et al., 2009).
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError

H = TypeVar("H", bound=Hashable)
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOPWORD_TEXT = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with"
)
_BM25_STOPWORDS = frozenset(_STOPWORD_TEXT.split(" "))


def _bm25_terms(text: str) -> list[str]:
    """BM25's terms of ``text``: its lower-cased words less :data:`_BM25_STOPWORDS`. Its own list and rule,
    not :func:`tkgqa.query.text.words.tokenize` (which reads questions): changing either changes what is
    retrieved."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _BM25_STOPWORDS]


def rrf(rankings: Iterable[Sequence[H]], k: int = 60) -> list[tuple[H, float]]:
    """Reciprocal rank fusion: ``score(d) = Σ_r 1 / (k + rank_r(d))`` (ranks from 1); best first, ties by
    first appearance."""
    if k < 0:
        raise ConfigError(f"rrf k must be >= 0, got {k}")
    scores: dict[H, float] = {}
    for ranking in rankings:
        seen: set[H] = set()
        for rank, item in enumerate(ranking, 1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


class _SimpleBM25:
    """Lucene BM25 (idf ``log(1 + (N − df + .5)/(df + .5))``, bm25s's default) over posting lists."""

    def __init__(self, docs: list[list[str]], k1: float, b: float) -> None:
        self.k1, self.b = k1, b
        self.n = len(docs)
        self.lengths = np.array([len(d) for d in docs], dtype=np.float64)
        self.avgdl = float(self.lengths.mean()) if self.n else 0.0
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                self.postings[term].append((i, tf))

    def scores(self, query: list[str]) -> npt.NDArray[np.float64]:
        out = np.zeros(self.n, dtype=np.float64)
        norm = self.k1 * (1 - self.b + self.b * self.lengths / (self.avgdl or 1.0))
        for term in set(query):
            post = self.postings.get(term)
            if not post:
                continue
            idf = math.log(1 + (self.n - len(post) + 0.5) / (len(post) + 0.5))
            ids = np.fromiter((i for i, _ in post), dtype=np.int64, count=len(post))
            tf = np.fromiter((t for _, t in post), dtype=np.float64, count=len(post))
            out[ids] += idf * tf / (tf + norm[ids])  # Lucene: no (k1 + 1) factor, as bm25s
        return out


class BM25Retriever:
    """BM25 over a fixed list of texts; :meth:`search` returns ``(ids, scores)`` best first (score > 0)."""

    def __init__(
        self,
        texts: Sequence[str],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        backend: Literal["auto", "bm25s", "python"] = "auto",
    ) -> None:
        self.size = len(texts)
        docs = [_bm25_terms(t) for t in texts]
        if backend == "auto":
            backend = "bm25s" if importlib.util.find_spec("bm25s") is not None else "python"
        self.backend = backend
        self._model: Any
        if backend == "bm25s":
            import bm25s

            self._model = bm25s.BM25(k1=k1, b=b)
            if self.size:
                self._model.index(docs, show_progress=False)
        elif backend == "python":
            self._model = _SimpleBM25(docs, k1, b)
        else:
            raise ConfigError(f"unknown BM25 backend {backend!r}; use auto, bm25s or python")

    def __len__(self) -> int:
        return self.size

    def search(self, query: str, k: int = 15) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        tokens = _bm25_terms(query)
        k = min(k, self.size)
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        if k <= 0 or not tokens:
            return empty
        if self.backend == "bm25s":
            known = [t for t in tokens if t in self._model.vocab_dict]
            if not known:
                return empty
            docs, scores = self._model.retrieve([known], k=k, show_progress=False, n_threads=1)
            ids, vals = np.asarray(docs[0], dtype=np.int64), np.asarray(scores[0], dtype=np.float32)
        else:
            all_scores = self._model.scores(tokens)
            top = np.argpartition(-all_scores, k - 1)[:k] if k < self.size else np.arange(self.size)
            top = top[np.lexsort((top, -all_scores[top]))]
            ids, vals = top.astype(np.int64), all_scores[top].astype(np.float32)
        keep = vals > 0
        return ids[keep], vals[keep]
