"""Helpers for the retrieval tests (a counting embedder, toy facts, random unit vectors)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tkgqa.kg import Fact
from tkgqa.retrieval import HashingEmbedder
from tkgqa.retrieval.embedders import FloatMatrix
from tkgqa.time import TimePoint


class CountingEmbedder:
    """Wraps the hashing embedder and counts how many texts reach ``encode``."""

    def __init__(self, name: str = "counting") -> None:
        self._inner = HashingEmbedder(dim=64)
        self._name = name
        self.calls = 0
        self.texts_seen = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> FloatMatrix:
        self.calls += 1
        self.texts_seen += len(texts)
        return self._inner.encode(texts)


def day(text: str) -> TimePoint:
    y, m, d = (int(x) for x in text.split("-"))
    return TimePoint(y, m, d)


def point_fact(s: str, r: str, o: str, when: str) -> Fact:
    t = day(when)
    return Fact(s, r, o, t, t)


def toy_facts() -> list[Fact]:
    facts = [
        point_fact("Barack_Obama", "Make_a_visit", "China", "2014-11-10"),
        point_fact("Barack_Obama", "Make_a_visit", "China", "2009-11-15"),
        point_fact("Barack_Obama", "Make_a_visit", "Japan", "2014-04-23"),
        point_fact("Barack_Obama", "Express_intent_to_meet", "Xi_Jinping", "2013-06-01"),
        point_fact("Angela_Merkel", "Make_a_visit", "China", "2012-08-30"),
        point_fact("Angela_Merkel", "Consult", "Francois_Hollande", "2013-02-01"),
        point_fact("Xi_Jinping", "Host_a_visit", "Barack_Obama", "2014-11-10"),
        point_fact("Shinzo_Abe", "Make_statement", "Japan", "2015-01-05"),
        point_fact("Vladimir_Putin", "Make_a_visit", "China", "2014-05-20"),
        point_fact("Vladimir_Putin", "Sign_formal_agreement", "China", "2014-05-21"),
    ]
    facts.append(Fact("Albert_Einstein", "educated_at", "ETH_Zurich", TimePoint(1896), TimePoint(1900)))
    return facts


def random_unit(n: int, dim: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)
