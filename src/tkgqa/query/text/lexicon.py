"""Relation lexicon: question words → KG relations, built from the relation names themselves.

Each relation name is split into words (``Express_intent_to_meet_or_negotiate`` → express, intent, meet |
negotiate), every word is lemmatised and mapped to its synonym concepts (:mod:`.words`), so "expressed the
intention to negotiate with" meets ``express``/``intent``/``negotiate``. A relation scores the weight of its
words the question covers, minus a penalty for its words the question does not mention and for the
question's content words it does not explain; the KG frequency of the relation breaks ties.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass

from ...kg.base import KGStore
from .words import LIGHT_WORDS, STOPWORDS, concepts_of

_SPLIT = re.compile(r"[A-Za-z0-9]+|[,()]")
# relation pairs that name the same event from the other side (general English: a host receives a visitor)
INVERSE_VERBS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("make", "visit"): ("host", "visit"),
    ("host", "visit"): ("make", "visit"),
}


@dataclass(frozen=True, slots=True)
class RelWord:
    concepts: frozenset[str]
    weight: float
    required: bool
    group: int  # words of one "A, B or C" list share a group: one of them is enough


@dataclass(frozen=True, slots=True)
class RelationEntry:
    name: str
    words: tuple[RelWord, ...]
    prior: float
    key: tuple[str, ...]  # lemmas of the main words (for inverse lookups)


def relation_words(name: str) -> tuple[tuple[RelWord, ...], tuple[str, ...]]:
    """Split a relation name into weighted words; "A, B or C" share a group; words in parentheses are
    optional."""
    raw = _SPLIT.findall(name.replace("_", " ").replace("/", " "))
    out: list[RelWord] = []
    key: list[str] = []
    depth, group, alternative = 0, 0, False
    for tok in raw:
        w = tok.lower()
        if w in {"(", ")"}:
            depth = max(0, depth + (1 if w == "(" else -1))
        elif w in {",", "or"}:
            alternative = True
        elif w not in STOPWORDS and len(w) > 1:
            if not alternative:
                group += 1
            alternative = False
            cs = frozenset(concepts_of(w))
            required = depth == 0
            weight = (0.3 if w in LIGHT_WORDS else 1.0) if required else 0.5
            out.append(RelWord(cs, weight, required, group))
            if required:
                key.append(min(cs))
    return tuple(out), tuple(key)


class RelationLexicon:
    """Ranks a KG's relations for the content words of a question."""

    def __init__(self, kg: KGStore) -> None:
        self.kg = kg
        self._symmetric: dict[str, bool] = {}
        self._idf_cache: dict[frozenset[str], float] = {}
        self._inverse: dict[str, str | None] = {}
        counts = _relation_counts(kg)
        total = max(1, sum(counts.values()))
        self.entries: list[RelationEntry] = []
        self.by_concept: dict[str, list[int]] = defaultdict(list)
        self.by_key: dict[tuple[str, ...], str] = {}
        for name in kg.relations:
            ws, key = relation_words(kg.label(name) if kg.label(name) != name else name)
            if not ws:
                continue
            prior = math.log10(1 + 1000 * counts.get(name, 0) / total)
            idx = len(self.entries)
            self.entries.append(RelationEntry(name, ws, prior, key))
            self.by_key.setdefault(key, name)
            for w in ws:
                for c in w.concepts:
                    self.by_concept[c].append(idx)
        for entry in self.entries:  # measured once here so that answering stays fast
            self.symmetric(entry.name)

    def symmetric(self, relation: str, *, sample: int = 300, threshold: float = 0.3) -> bool:
        """Whether the KG mostly records ``relation`` both ways (``(a, r, b, t)`` with ``(b, r, a, t)``):
        measured on a sample of its facts, once per relation."""
        known = self._symmetric.get(relation)
        if known is None:
            every = self.kg.facts(relation=relation)
            facts = every[:: max(1, len(every) // sample)]
            mirrored = sum(
                1
                for f in facts
                if self.kg.count(subject=f.object, relation=relation, object=f.subject, time=f.start)
            )
            known = bool(facts) and mirrored / len(facts) >= threshold
            self._symmetric[relation] = known
        return known

    def inverse(self, relation: str) -> str | None:
        """The relation naming the same event from the other side (``Make_a_visit`` ↔ ``Host_a_visit``)."""
        if relation not in self._inverse:
            found = None
            for entry in self.entries:
                if entry.name == relation:
                    other = INVERSE_VERBS.get(entry.key)
                    found = self.by_key.get(other) if other else None
            self._inverse[relation] = found
        return self._inverse[relation]

    def rank(self, question_words: list[str], *, limit: int = 5) -> list[tuple[str, float]]:
        """Relations ranked by score for the question's content words (best first)."""
        qcs = [frozenset(concepts_of(w)) for w in question_words]
        qcs = [cs for cs in qcs if cs]
        if not qcs:
            return []
        cands: set[int] = set()
        for cs in qcs:
            for c in cs:
                cands.update(self.by_concept.get(c, ()))
        scored: list[tuple[float, str]] = []
        for idx in cands:
            entry = self.entries[idx]
            score = self._score(entry, qcs)
            scored.append((score, entry.name))
        scored.sort(key=lambda x: -x[0])
        return [(name, score) for score, name in scored[:limit]]

    def _idf(self, concepts: frozenset[str]) -> float:
        known = self._idf_cache.get(concepts)
        if known is None:
            df = max((len(self.by_concept.get(c, ())) for c in concepts), default=0)
            known = math.log(1 + len(self.entries) / df) if df else 0.0
            self._idf_cache[concepts] = known
        return known

    def _score(self, entry: RelationEntry, qcs: list[frozenset[str]]) -> float:
        covered = [False] * len(qcs)
        groups_hit: dict[int, bool] = {}
        group_weight: dict[int, float] = {}
        gain = 0.0
        for w in entry.words:
            hit = False
            for k, cs in enumerate(qcs):
                if w.concepts & cs:
                    covered[k] = True
                    hit = True
            weight = w.weight * self._idf(w.concepts)
            if w.required:
                group_weight[w.group] = max(group_weight.get(w.group, 0.0), weight)
                groups_hit[w.group] = groups_hit.get(w.group, False) or hit
            if hit:
                gain += weight if w.required else 0.3 * weight
        missing = sum(group_weight[g] for g, hit in groups_hit.items() if not hit)
        uncovered = sum(self._idf(cs) for cs, c in zip(qcs, covered, strict=True) if not c)
        return gain - 0.5 * missing - 0.4 * uncovered + 0.3 * entry.prior


def _relation_counts(kg: KGStore) -> dict[str, int]:
    return kg.relation_counts()
