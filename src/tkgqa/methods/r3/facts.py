"""Facts as R3 sees them: numbered (``F1``, ``F2``… per question, in retrieval order), rendered as
``(head, relation, tail {qualifiers}; times)``, the 1-hop sub-graph of an entity set (R3 Eq. 2: facts whose
head is an entity; ``direction="both"`` also takes the facts pointing at it), and pruning (Eq. 4): the top-k
facts by embedding similarity to the axiom, or — the ablation of Table 7 — the first k in KG order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from ...kg.base import KGStore
from ...kg.crlt import split_relation
from ...kg.fact import Fact
from ...retrieval.embedders import Embedder


class Direction(StrEnum):
    HEAD = "head"  # the paper's K^q = {(h, r, t) | h ∈ E^q}
    BOTH = "both"


class Pruning(StrEnum):
    SEMANTIC = "semantic"  # top-k by similarity to the axiom (R3)
    TRUNCATION = "truncation"  # the first k facts of the sub-graph (Table 7's ablation)


def _time_text(fact: Fact) -> str:
    start, end = fact.start, fact.end
    if start is None and end is None:
        return ""
    if start is not None and start == end:
        return "" if fact.object == start.iso() else f"point in time: {start}"
    parts = []
    if start is not None:
        parts.append(f"start time: {start}")
    if end is not None and end != start:
        parts.append(f"end time: {end}")
    return "; ".join(parts)


def render_fact(fact: Fact, kg: KGStore | None = None) -> str:
    """``(Vilnius, country, Soviet Union; start time: 1944-07; end time: 1990-03-10)``; labels through
    ``kg`` (a date literal shows as written: ``22 June 1984``), non-time qualifiers in braces."""

    def label(name: str) -> str:
        return kg.label(name) if kg is not None else name.replace("_", " ")

    relation, qualifiers = split_relation(fact.relation)
    qual = " {" + "; ".join(str(q) for q in qualifiers) + "}" if qualifiers else ""
    when = _time_text(fact)
    return (
        f"({label(fact.subject)}, {label(relation)}, {label(fact.object)}{qual}{'; ' + when if when else ''})"
    )


class FactPool:
    """The facts one question has seen, numbered ``F1, F2, …`` in the order they were first retrieved."""

    def __init__(self, kg: KGStore) -> None:
        self.kg = kg
        self._ids: dict[Fact, str] = {}
        self._facts: dict[str, Fact] = {}
        self._text: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._facts)

    def __contains__(self, fid: object) -> bool:
        return fid in self._facts

    def add(self, facts: Iterable[Fact]) -> list[str]:
        """Ids of ``facts`` (numbering new ones)."""
        out = []
        for f in facts:
            fid = self._ids.get(f)
            if fid is None:
                fid = self._ids[f] = f"F{len(self._ids) + 1}"
                self._facts[fid] = f
                self._text[fid] = render_fact(f, self.kg)
            out.append(fid)
        return out

    def fact(self, fid: str) -> Fact:
        return self._facts[fid]

    def text(self, fid: str) -> str:
        return self._text[fid]

    def lines(self, ids: Iterable[str]) -> list[tuple[str, str]]:
        return [(i, self._text[i]) for i in ids]

    def table(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``{id: fact dict + "text"}`` for the trace."""
        return {i: {**self._facts[i].to_dict(), "text": self._text[i]} for i in ids}


def subgraph(kg: KGStore, entities: Iterable[str], direction: Direction = Direction.HEAD) -> list[Fact]:
    """The facts around ``entities`` (each once, in KG order per entity, entities in the given order)."""
    seen: dict[Fact, None] = {}
    for e in entities:
        found = kg.facts(subject=e) if direction == Direction.HEAD else kg.incident(e)
        for f in found:
            seen.setdefault(f, None)
    return list(seen)


class Ranker:
    """Ranks candidate facts against a text (the axiom) by cosine similarity of their embeddings; every
    text's embedding is memoised for the life of the ranker (at most 200k of them)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._memo: dict[str, np.ndarray[Any, Any]] = {}

    def _vectors(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            for t, v in zip(missing, self.embedder.encode(missing), strict=True):
                if len(self._memo) < 200_000:
                    self._memo[t] = np.asarray(v, dtype=np.float32)
        rows = [self._memo[t] if t in self._memo else self.embedder.encode([t])[0] for t in texts]
        return np.stack(rows) if rows else np.zeros((0, self.embedder.dim), dtype=np.float32)

    def warm(self, texts: Sequence[str]) -> None:
        """Embed ``texts`` now, in batches (later lookups are memo hits)."""
        self._vectors(texts)

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        q = self._vectors([query])[0]
        return [float(x) for x in self._vectors(texts) @ q]

    def order(self, query: str, texts: Sequence[str]) -> list[int]:
        """Indices of ``texts``, most similar first (ties in the given order)."""
        scores = self.scores(query, texts)
        return sorted(range(len(texts)), key=lambda i: (-scores[i], i))


def prune(
    candidates: Sequence[Fact],
    texts: Sequence[str],
    query: str,
    k: int,
    mode: Pruning,
    ranker: Ranker | None,
) -> tuple[list[int], list[int]]:
    """``(kept, rest)``: indices of the top ``k`` candidates and of the others, each in rank order.

    ``SEMANTIC`` ranks by similarity to ``query`` (needs ``ranker``); ``TRUNCATION`` keeps KG order."""
    if mode == Pruning.SEMANTIC:
        if ranker is None:
            raise ValueError("semantic pruning needs a ranker (an embedder)")
        order = ranker.order(query, texts)
    else:
        order = list(range(len(candidates)))
    return order[:k], order[k:]
