"""Entity mentions in questions, linked to KG entity names.

:class:`MentionIndex` is built once per KG. It finds, over the question's token n-grams (longest first):

* exact matches of normalised entity labels (``Henry M. Paulson`` ↔ "Henry M Paulson");
* ``Role_(Qualifier)`` entities (ICEWS naming): the qualifier is found by its label, its country names or
  its demonyms ("Danish", "Denmark's", "of Denmark"), then the role words next to it are matched against the
  roles that qualifier has in the KG ("the Danish Ministry of Defence and Security" →
  ``Defense_/_Security_Ministry_(Denmark)``, "citizens of Belgium" → ``Citizen_(Belgium)``);
* fuzzy matches (rapidfuzz) of capitalised spans nothing else explained.

Small per-question context KGs (``scan=True``) are scanned label by label instead: every entity whose
label words appear in the question is a mention (lower-case questions, possessives, partial names).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from rapidfuzz import fuzz

from ...kg.base import KGStore
from .countries import COUNTRIES
from .words import STOPWORDS, VOCAB, Token, concepts_of, mention_key, words

_ROLE = re.compile(r"^(.+)_\(([^()]+)\)$")
_MAX_NGRAM = 9
_CONNECTORS = frozenset({"of", "the", "and", "for", "in", "'s", "from", "or"})
_LEFT_LINKS = frozenset({"of", "in", "from", "for"})
SMALL_KG = 400  # a context KG above this size is indexed, not scanned


@dataclass(frozen=True, slots=True)
class EntityMention:
    """Entity ``entity`` mentioned by tokens ``[start, end)``; ``kind`` says which rule found it."""

    start: int
    end: int
    entity: str
    score: float
    kind: str  # label | role | country | fuzzy | scan | given
    coverage: float = 1.0  # share of the label's (weighted) words found in the question

    def overlaps(self, other: EntityMention) -> bool:
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True, slots=True)
class _Role:
    entity: str
    concepts: tuple[frozenset[str], ...]  # one concept set per content word of the role


def _role_concepts(role: str) -> tuple[frozenset[str], ...]:
    out: list[frozenset[str]] = []
    for w in rewrite_phrases(words(role)):
        cs = frozenset(concepts_of(w))
        if w not in STOPWORDS and len(w) > 1 and cs not in out:
            out.append(cs)
    return tuple(out)


# multi-word role names whose words mean something else one by one (general English)
_PHRASES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("prime", "minister"): ("head", "government"),
    ("premier",): ("head", "government"),
    ("head", "of", "state"): ("head", "government"),
    ("armed", "forces"): ("military",),
    ("armed", "force"): ("military",),
    ("defence", "forces"): ("military",),
    ("defense", "forces"): ("military",),
    ("security", "forces"): ("military",),
    ("foreign", "minister"): ("foreign", "affairs"),
    ("foreign", "office"): ("foreign", "affairs"),
    ("state", "department"): ("foreign", "affairs"),
    ("interior", "ministry"): ("domestic", "affairs"),
    ("interior", "minister"): ("domestic", "affairs"),
    ("ministry", "of", "interior"): ("domestic", "affairs"),
    ("ministry", "of", "the", "interior"): ("domestic", "affairs"),
    ("home", "affairs"): ("domestic", "affairs"),
}


_PHRASE_WORDS = frozenset(w for key in _PHRASES for w in key)


def rewrite_phrases(ws: list[str]) -> list[str]:
    """Replace multi-word expressions of :data:`_PHRASES` (longest first) in a word list."""
    out: list[str] = []
    i = 0
    while i < len(ws):
        for size in (4, 3, 2, 1):
            rep = _PHRASES.get(tuple(ws[i : i + size]))
            if rep is not None:
                out.extend(rep)
                i += size
                break
        else:
            out.append(ws[i])
            i += 1
    return out


class MentionIndex:
    """Per-KG lookup tables for entity mentions (build once, reuse for every question)."""

    def __init__(self, kg: KGStore, *, scan: bool = False) -> None:
        """``scan``: match every label against the question (for small per-question contexts) instead of
        the n-gram index with ``Role_(Country)`` rules."""
        self.kg = kg
        self.small = scan and len(kg.entities) <= SMALL_KG
        self.labels: dict[str, list[str]] = defaultdict(list)
        self.roles: dict[str, list[_Role]] = defaultdict(list)  # qualifier key -> roles
        self.role_vocab: dict[str, set[str]] = defaultdict(set)  # qualifier key -> concepts of its roles
        self.qualifiers: dict[str, set[str]] = defaultdict(set)  # surface form -> qualifier keys
        self.demonym_forms: set[str] = set()
        self.common: set[str] = set()  # words of role names: common nouns, never fuzzy-linked alone
        self.token_index: dict[str, list[str]] = defaultdict(list)
        self._degree: dict[str, int] = {}
        self._scan: list[tuple[str, list[str]]] = []
        for name in kg.entities:
            label = kg.label(name)
            key = mention_key(label)
            if not key:
                continue
            self.labels[key].append(name)
            if self.small:
                self._scan.append((name, key.split()))
                continue
            m = _ROLE.match(name)
            if m:
                role, qual = m.group(1), m.group(2)
                qkey = mention_key(qual)
                concepts = _role_concepts(role)
                if concepts:
                    self.roles[qkey].append(_Role(name, concepts))
                    for cs in concepts:
                        self.role_vocab[qkey].update(cs)
                    self.common.update(words(role))
                    self.qualifiers[qkey].add(qkey)
            for tok in set(key.split()):
                if tok not in STOPWORDS and len(tok) > 2:
                    self.token_index[tok].append(name)
        if not self.small:
            self._add_countries()
        self.first_len: dict[str, int] = {}  # first word of a label/qualifier key → its longest length
        for key in [*self.labels, *self.qualifiers]:
            ws = key.split()
            if ws:
                self.first_len[ws[0]] = max(self.first_len.get(ws[0], 0), len(ws))

    def _add_countries(self) -> None:
        for names, demonyms in COUNTRIES:
            keys = [mention_key(n) for n in names]
            present = [k for k in keys if k in self.qualifiers or k in self.labels]
            if not present:
                continue
            qual_keys = {k for k in keys if k in self.qualifiers}
            entity_key = next((k for k in keys if k in self.labels), None)
            for form in [*keys, *(mention_key(d) for d in demonyms)]:
                if not form:
                    continue
                self.qualifiers[form].update(qual_keys)
                if entity_key is not None and form not in self.labels:
                    self.labels[form] = self.labels[entity_key]
            self.demonym_forms.update(mention_key(d) for d in demonyms)

    # --- helpers -------------------------------------------------------------------------------
    def degree(self, name: str) -> int:
        d = self._degree.get(name)
        if d is None:
            d = self.kg.count(subject=name) + self.kg.count(object=name)
            self._degree[name] = d
        return d

    def best_of(self, names: list[str]) -> str:
        return names[0] if len(names) == 1 else max(names, key=self.degree)

    # --- detection ------------------------------------------------------------------------------
    def find(
        self, tokens: list[Token], blocked: set[int] | None = None, *, min_coverage: float = 0.5
    ) -> list[EntityMention]:
        """Non-overlapping entity mentions, left to right; tokens in ``blocked`` (times) are skipped."""
        blocked = blocked or set()
        if self.small:
            return self._find_scan(tokens, blocked, min_coverage)
        cands: list[EntityMention] = []
        texts = [t.text for t in tokens]
        n = len(texts)
        for i in range(n):
            longest = self.first_len.get(texts[i], 0)
            if i in blocked or not longest:
                continue
            for j in range(min(n, i + min(_MAX_NGRAM, longest + 2)), i, -1):
                if any(k in blocked for k in range(i, j)):
                    continue
                if texts[j - 1] == "'s":
                    continue
                key = " ".join(w for w in texts[i:j] if w != "'s")
                if key.startswith("the "):
                    continue
                quals = self.qualifiers.get(key)
                if quals:
                    adjectival = (
                        key in self.demonym_forms
                        or (j < n and texts[j] == "'s")
                        or (i > 0 and texts[i - 1] == "the")
                    )
                    cands.extend(self._roles_around(texts, i, j, quals, blocked, adjectival))
                names = self.labels.get(key)
                if names and not (j - i == 1 and key in STOPWORDS):
                    kind = "country" if key in self.demonym_forms else "label"
                    score = (j - i) + (0.0 if kind == "country" else 0.5)
                    cands.append(EntityMention(i, j, self.best_of(names), score, kind))
        chosen = _select(cands)
        chosen += self._fuzzy(tokens, chosen, blocked)
        return sorted(chosen, key=lambda m: m.start)

    def _roles_around(
        self, texts: list[str], i: int, j: int, quals: set[str], blocked: set[int], adjectival: bool
    ) -> list[EntityMention]:
        """``Role_(Q)`` mentions around qualifier tokens ``[i, j)``: "Q's R", "Q R", "R of Q", "R of Q R"."""
        out: list[EntityMention] = []
        for qkey in quals:
            vocab = self.role_vocab.get(qkey)
            if not vocab:
                continue

            def usable(k: int, vocab: set[str] = vocab) -> bool:
                w = texts[k]
                return k not in blocked and (
                    w in _CONNECTORS or w in _PHRASE_WORDS or bool(vocab.intersection(concepts_of(w)))
                )

            right = _extend(j, 1, len(texts), usable, texts) if adjectival else j
            left = _extend(i - 1, -1, len(texts), usable, texts) + 1
            best: tuple[float, int, int, int, str] | None = None
            for lo in range(left, i + 1):
                if lo < i and texts[i - 1] not in _LEFT_LINKS and texts[i - 1] != "the":
                    continue
                for hi in range(j, right + 1):
                    window = [
                        w
                        for w in rewrite_phrases(texts[lo:i] + texts[j:hi])
                        if w not in _CONNECTORS and w not in STOPWORDS
                    ]
                    if not window:
                        continue
                    scored = self._best_role(qkey, window)
                    if scored and (best is None or (scored[0], hi - lo) > (best[0], best[1])):
                        best = (scored[0], hi - lo, lo, hi, scored[1])
            if best is not None and best[0] >= 0.5:
                score, _, lo, hi, entity = best
                while lo < i and (texts[lo] in _CONNECTORS or texts[lo] in STOPWORDS):
                    lo += 1
                while hi > j and (texts[hi - 1] in _CONNECTORS or texts[hi - 1] in STOPWORDS):
                    hi -= 1
                out.append(EntityMention(lo, hi, entity, (hi - lo) + 0.25 + 0.1 * score, "role"))
        return out

    def _best_role(self, qkey: str, window: list[str]) -> tuple[float, str] | None:
        wcs = [set(concepts_of(w)) for w in window]
        best: tuple[float, str] | None = None
        for role in self.roles.get(qkey, ()):
            matched_role = sum(1 for cs in role.concepts if any(cs & w for w in wcs))
            if not matched_role:
                continue
            extra = sum(1 for w in wcs if not any(cs & w for cs in role.concepts))
            score = matched_role - 0.5 * (len(role.concepts) - matched_role) - 0.6 * extra
            if best is None or score > best[0]:
                best = (score, role.entity)
        return best

    def _fuzzy(
        self, tokens: list[Token], chosen: list[EntityMention], blocked: set[int]
    ) -> list[EntityMention]:
        """Capitalised spans no rule explained, matched by rapidfuzz against labels sharing a word."""
        covered = set(blocked)
        for m in chosen:
            covered.update(range(m.start, m.end))
        out: list[EntityMention] = []
        i, n = 1, len(tokens)  # the first word is capitalised anyway
        while i < n:
            if i in covered or not tokens[i].capitalized or tokens[i].text in STOPWORDS:
                i += 1
                continue
            j = i
            while (
                j < n
                and j not in covered
                and (tokens[j].capitalized or tokens[j].text in {"of", "al", "bin"})
            ):
                j += 1
            span = " ".join(t.text for t in tokens[i:j])
            if j - i == 1 and (tokens[i].text in self.common or tokens[i].text in VOCAB or len(span) < 4):
                i = j
                continue
            cands: set[str] = set()
            for t in tokens[i:j]:
                cands.update(self.token_index.get(t.text, ())[:200])
            # ties on score break by degree, then by the label's words found elsewhere in the question (the
            # "2014" of "2014 FIFA World Cup" was read as a time), then by name — never by hash order
            question_words = {t.text for t in tokens}
            best: tuple[float, int, int, str] | None = None
            for name in sorted(cands):
                label = mention_key(self.kg.label(name))
                score = max(fuzz.ratio(span, label), fuzz.token_set_ratio(span, label) - 5)
                key = (score, self.degree(name), len(question_words.intersection(label.split())), name)
                if best is None or key[:3] > best[:3]:
                    best = key
            taken = {m.entity for m in chosen} | {m.entity for m in out}
            if best is not None and best[0] >= (85 if j - i > 1 else 92) and best[3] not in taken:
                out.append(EntityMention(i, j, best[3], (j - i) * best[0] / 100, "fuzzy"))
            i = j
        return out

    def _find_scan(self, tokens: list[Token], blocked: set[int], min_coverage: float) -> list[EntityMention]:
        """Every entity whose label words appear in the question; words shared by many labels of the
        context ("party", "award") weigh less."""
        texts = [t.text for t in tokens]
        positions: dict[str, list[int]] = defaultdict(list)
        for k, w in enumerate(texts):
            if k not in blocked:
                positions[w].append(k)
        df: dict[str, int] = defaultdict(int)
        for _, label_words in self._scan:
            for w in set(label_words):
                df[w] += 1
        cands: list[EntityMention] = []
        for name, label_words in self._scan:
            content = [w for w in label_words if w not in STOPWORDS]
            if not content:
                continue
            hits: list[int] = []
            got = total = 0.0
            for w in content:
                weight = 1.0 / df[w]
                total += weight
                pos = positions.get(w)
                if pos is None:
                    pos = _fuzzy_positions(w, texts, blocked)
                if pos:
                    hits.append(pos[0])
                    got += weight
            if not hits:
                continue
            coverage = got / total
            if coverage < min_coverage or (len(content) > 1 and len(hits) == 1 and len(content[0]) < 4):
                continue
            score = len(hits) * coverage
            cands.append(EntityMention(min(hits), max(hits) + 1, name, score, "scan", coverage))
        return cands


def _extend(k: int, step: int, n: int, usable: Callable[[int], bool], texts: list[str]) -> int:
    """Walk from token ``k`` in direction ``step`` over usable tokens (one unusable gap allowed between usable
    ones, at most 7 tokens); returns the first position not taken."""
    start, gap = k, False
    while 0 <= k < n and abs(k - start) < 7:
        if usable(k):
            k += step
            continue
        nxt = k + step
        if not gap and texts[k] not in STOPWORDS and 0 <= nxt < n and usable(nxt) and abs(nxt - start) < 7:
            gap = True
            k = nxt + step
            continue
        break
    return k


def _fuzzy_positions(word: str, texts: list[str], blocked: set[int]) -> list[int]:
    if len(word) < 4:
        return []
    out = []
    for k, w in enumerate(texts):
        if k in blocked or len(w) < 4 or w[0] != word[0]:
            continue
        if (w.startswith(word) and len(w) - len(word) <= 2) or fuzz.ratio(w, word) >= 86:
            out.append(k)
    return out


def _select(cands: list[EntityMention]) -> list[EntityMention]:
    """Greedy: highest score (longest span) first, no overlaps."""
    chosen: list[EntityMention] = []
    for c in sorted(cands, key=lambda m: (-m.score, m.start)):
        if not any(c.overlaps(o) for o in chosen):
            chosen.append(c)
    return chosen
