"""Similarity of texts to a question: cosine over an embedder when one is given, else word-set Jaccard.

Used for ARI's candidate filter (Eq. 3) and clustering and by the KG-RAG baseline."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .embedders import Embedder

_WORD = re.compile(r"[a-z0-9]+")


class Similarity:
    """Cosine similarity of texts to the question: an embedder when given, else word-set Jaccard."""

    def __init__(self, question: str, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self.question = question
        self._qvec = embedder.encode([question])[0] if embedder is not None else None
        self._qwords = set(_WORD.findall(question.lower()))

    def scores(self, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        if self.embedder is not None and self._qvec is not None:
            mat = self.embedder.encode(list(texts))
            return [float(x) for x in np.asarray(mat) @ self._qvec]
        out = []
        for t in texts:
            words = set(_WORD.findall(t.lower()))
            union = words | self._qwords
            out.append(len(words & self._qwords) / len(union) if union else 0.0)
        return out
