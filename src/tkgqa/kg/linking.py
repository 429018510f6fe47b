"""Link mentions ("Barack Obama", "citizen of thailand") to KG entity and relation names.

Names and labels are normalised (case, ``_``/spaces, accents, punctuation, parentheses: ``Citizen_(Thailand)``
→ ``citizen thailand``) into an exact-match table; an alias table maps extra surface forms; fuzzy matching
(rapidfuzz token/edit ratios) ranks the rest. Every match is a :class:`Candidate` with a score in
``[0, 1]`` and the method that found it (``exact`` > ``alias`` > ``fuzzy``). :meth:`resolve` returns one name
or raises :class:`NotFoundError` listing near matches.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz, process

from ..errors import NotFoundError
from .base import KGStore
from .fact import display_name

Method = Literal["exact", "alias", "fuzzy"]
_NON_WORD = re.compile(r"[\W_]+")


def normalize(text: str) -> str:
    """The project's one text form of a name, mention or answer: accents stripped (NFKD), case folded,
    ``_``/punctuation → single spaces, whitespace collapsed; idempotent (``Côte_d'Ivoire`` →
    ``cote d ivoire``). Answers add a time rule on top: `normalize_answer` (query.text)."""
    s = str(text)
    if s.isascii():
        return _NON_WORD.sub(" ", s.casefold()).strip()
    for _ in range(4):  # NFKD/casefold can feed each other (e.g. "ℌ" → "H" → "h"); iterate to a fixpoint
        folded = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
        folded = _NON_WORD.sub(" ", folded.casefold()).strip()
        if folded == s:
            break
        s = folded
    return s


def _blend(a: str, b: str) -> float:
    """Similarity in [0, 1) of two normalised strings (exact equality is handled before, as ``exact``)."""
    score = max(fuzz.ratio(a, b), 0.95 * fuzz.token_sort_ratio(a, b), 0.9 * fuzz.token_set_ratio(a, b))
    return min(score / 100, 0.999)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A KG name matching a mention: ``name`` as in the KG, its display ``label``, ``score`` in [0, 1]."""

    name: str
    label: str
    score: float
    method: Method

    def __str__(self) -> str:
        """The name, with its label when that is not just the name spelled with spaces (Wikidata ids)."""
        return self.name if display_name(self.name) == self.label else f"{self.name} ({self.label})"


class _Linker:
    """Exact / alias / fuzzy lookup over a fixed vocabulary of names (entities or relations)."""

    what = "name"

    def __init__(
        self,
        names: Iterable[str],
        labels: Mapping[str, str] | None = None,
        aliases: Mapping[str, str | Sequence[str]] | None = None,
    ) -> None:
        self._names: list[str] = list(dict.fromkeys(names))
        labels = labels or {}
        self._labels = [labels.get(n) or display_name(n) for n in self._names]
        self._exact: dict[str, list[int]] = {}
        for i, (name, label) in enumerate(zip(self._names, self._labels, strict=True)):
            key = normalize(name)
            self._exact.setdefault(key, []).append(i)
            key2 = normalize(label)
            if key2 != key:
                self._exact.setdefault(key2, []).append(i)
        self._alias: dict[str, list[int]] = {}
        self._position = {n: i for i, n in enumerate(self._names)}
        for alias, targets in (aliases or {}).items():
            for target in [targets] if isinstance(targets, str) else targets:
                if target in self._position:
                    self._alias.setdefault(normalize(alias), []).append(self._position[target])
        self._keys = list(self._exact)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._position

    def _candidate(self, i: int, score: float, method: Method) -> Candidate:
        return Candidate(self._names[i], self._labels[i], score, method)

    def link(
        self, mention: str, k: int = 5, *, fuzzy: bool = True, min_score: float = 0.6
    ) -> list[Candidate]:
        """Up to ``k`` candidates, best first: exact and alias matches, or (only when there are none) fuzzy
        matches scoring >= ``min_score``."""
        key = normalize(mention)
        found: dict[int, Candidate] = {}
        verbatim = self._position.get(mention)
        if verbatim is not None:
            found[verbatim] = self._candidate(verbatim, 1.0, "exact")
        for i in self._exact.get(key, ()):
            found.setdefault(i, self._candidate(i, 1.0, "exact"))
        for i in self._alias.get(key, ()):
            found.setdefault(i, self._candidate(i, 1.0, "alias"))
        if fuzzy and not found and key:
            for i, cand in self._fuzzy(key, k, min_score):
                found.setdefault(i, cand)
        return list(found.values())[:k]

    def _fuzzy(self, key: str, k: int, min_score: float) -> list[tuple[int, Candidate]]:
        # Preselect with token_set_ratio (fast, order- and subset-tolerant), then rank by a blend that
        # prefers whole-string similarity: max(ratio, .95 token_sort_ratio, .9 token_set_ratio).
        pre = process.extract(
            key, self._keys, scorer=fuzz.token_set_ratio, limit=max(10 * k, 50), score_cutoff=min_score * 90
        )
        scored: dict[int, float] = {}
        for text, _, _ in pre:
            score = _blend(key, text)
            if score >= min_score:
                for i in self._exact[text]:
                    scored[i] = max(scored.get(i, 0.0), score)
        best = sorted(scored.items(), key=lambda kv: (-kv[1], len(self._labels[kv[0]]), self._names[kv[0]]))
        return [(i, self._candidate(i, round(s, 4), "fuzzy")) for i, s in best[:k]]

    def suggest(self, mention: str, k: int = 5) -> list[Candidate]:
        """Near matches for an error message (fuzzy, permissive threshold)."""
        return self.link(mention, k, min_score=0.5)

    def resolve(self, mention: str, *, fuzzy_threshold: float = 0.9) -> str:
        """The single name ``mention`` refers to: an exact name/label or alias match, else a clear fuzzy
        winner scoring >= ``fuzzy_threshold``; otherwise :class:`NotFoundError` with suggestions."""
        candidates = self.link(mention, 5, min_score=0.5)
        if candidates and candidates[0].method != "fuzzy":
            return candidates[0].name
        clear = len(candidates) == 1 or (len(candidates) > 1 and candidates[1].score < candidates[0].score)
        if candidates and candidates[0].score >= fuzzy_threshold and clear:
            return candidates[0].name
        raise NotFoundError(f"{self.what} {mention!r} not found", suggestions=[str(c) for c in candidates])


class EntityLinker(_Linker):
    """Links entity mentions; build it with :meth:`from_kg`."""

    what = "entity"

    @classmethod
    def from_kg(cls, kg: KGStore, aliases: Mapping[str, str | Sequence[str]] | None = None) -> EntityLinker:
        return cls(kg.entities, getattr(kg, "labels", None), aliases)


class RelationLinker(_Linker):
    """Links relation mentions (``"consult"`` → ``Consult``, ``"position held"`` → ``P39``)."""

    what = "relation"

    @classmethod
    def from_kg(cls, kg: KGStore, aliases: Mapping[str, str | Sequence[str]] | None = None) -> RelationLinker:
        return cls(kg.relations, getattr(kg, "labels", None), aliases)
