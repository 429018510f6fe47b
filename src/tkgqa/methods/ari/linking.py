"""Question → anchors: linked entities, time mentions, the relations of the entities' 1-hop subgraph, and the
masked question (entities → ``{entity}``, times → ``{time}``) used to cluster the history memory.

Mentions come from the symbolic reasoner's :class:`MentionIndex` (ICEWS role names, demonyms, fuzzy spans)
and its time-mention finder; if that module cannot be imported, a generic n-gram exact-match linker over
:class:`tkgqa.kg.linking.EntityLinker` and a small date regex take over.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...datasets.base import Question
from ...kg.base import KGStore
from ...time import TimePoint, try_parse_time
from .actions import QuestionAnchors

_TOKEN = re.compile(r"[A-Za-z0-9][\w'\-./]*|[^\w\s]")
_DATE = re.compile(
    r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{4}-\d{1,2}\b|"
    r"\b(?:\d{1,2}(?:st|nd|rd|th)?\s+)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?,?\s+\d{4}\b|\b(?:1\d{3}|20\d{2})\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class LinkedQuestion:
    anchors: QuestionAnchors
    masked: str
    mentions: tuple[str, ...] = ()


class QuestionLinker:
    """Links questions over one KG (build once per KG; reuse for every question)."""

    def __init__(self, kg: KGStore, max_entities: int = 2) -> None:
        self.kg = kg
        self.max_entities = max_entities
        self._index: Any = None
        self._generic: Any = None
        try:
            from ..symbolic.mentions import MentionIndex

            self._index = MentionIndex(kg)
        except ImportError:  # pragma: no cover - the symbolic module ships with the package
            from ...kg.linking import EntityLinker

            self._generic = EntityLinker.from_kg(kg)

    def link(self, question: Question) -> LinkedQuestion:
        text = question.text
        if self._index is not None:
            entities, times, masked = self._link_symbolic(text)
        else:  # pragma: no cover - see __init__
            entities, times, masked = self._link_generic(text)
        given = [e for e in question.entities if self.kg.has_entity(e)]
        ordered = list(dict.fromkeys([*given, *entities]))[: self.max_entities]
        given_times = [t for t in (try_parse_time(x) for x in question.times) if t is not None]
        all_times = tuple(dict.fromkeys([*given_times, *times]))
        anchors = QuestionAnchors(
            entities=tuple(ordered),
            times=all_times,
            out_relations={e: self._relations(e, True) for e in ordered},
            in_relations={e: self._relations(e, False) for e in ordered},
        )
        return LinkedQuestion(anchors, masked, tuple(entities))

    def _relations(self, entity: str, as_subject: bool) -> tuple[str, ...]:
        facts = self.kg.facts(subject=entity) if as_subject else self.kg.facts(object=entity)
        counts: dict[str, int] = {}
        for f in facts:
            counts[f.relation] = counts.get(f.relation, 0) + 1
        return tuple(sorted(counts, key=lambda r: (-counts[r], r)))

    def _link_symbolic(self, text: str) -> tuple[list[str], list[TimePoint], str]:
        from ..symbolic.timeref import find_times
        from ..symbolic.words import tokenize

        tokens = tokenize(text)
        times = find_times(text, tokens)
        time_tokens = {k: "{time}" for t in times for k in range(_core_start(t, tokens), t.end)}
        mentions = sorted(self._index.find(tokens, set(time_tokens)), key=lambda m: (m.start, -m.end))
        mask: dict[int, str] = dict(time_tokens)
        for m in mentions:
            for k in range(m.start, m.end):
                mask[k] = "{entity}"
        masked = _join_masked([t.orig for t in tokens], mask)
        entities = list(dict.fromkeys(m.entity for m in mentions))
        return entities, [t.point for t in times], masked

    def _link_generic(self, text: str) -> tuple[list[str], list[TimePoint], str]:  # pragma: no cover
        times: list[TimePoint] = []
        spans: list[tuple[int, int, str]] = []
        for m in _DATE.finditer(text):
            t = try_parse_time(m.group(0))
            if t is not None:
                times.append(t)
                spans.append((m.start(), m.end(), "{time}"))
        tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text)]
        found: list[str] = []
        i = 0
        while i < len(tokens):
            for j in range(min(len(tokens), i + 8), i, -1):
                phrase = text[tokens[i][0] : tokens[j - 1][1]]
                hits = self._generic.link(phrase, 1, fuzzy=False)
                if hits and not any(s <= tokens[i][0] < e for s, e, _ in spans):
                    found.append(hits[0].name)
                    spans.append((tokens[i][0], tokens[j - 1][1], "{entity}"))
                    i = j - 1
                    break
            i += 1
        masked = text
        for s, e, tag in sorted(spans, reverse=True):
            masked = masked[:s] + tag + masked[e:]
        return list(dict.fromkeys(found)), times, masked


def _core_start(mention: Any, tokens: list[Any]) -> int:
    """Start of the time expression itself (``find_times`` includes a preceding preposition)."""
    start = int(mention.start)
    if mention.relation and start < mention.end - 1 and not any(ch.isdigit() for ch in tokens[start].orig):
        return start + 1
    return start


def _join_masked(words: list[str], mask: dict[int, str]) -> str:
    out: list[str] = []
    for k, w in enumerate(words):
        tag = mask.get(k)
        if tag is None:
            out.append(w)
        elif not out or out[-1] != tag:
            out.append(tag)
    return " ".join(out)


def mask_question(text: str, entities: list[str], times: list[str]) -> str:
    """Replace the given surface strings by ``{entity}``/``{time}`` (for records built elsewhere)."""
    for e in sorted(entities, key=len, reverse=True):
        text = text.replace(e, "{entity}").replace(e.replace("_", " "), "{entity}")
    for t in sorted(times, key=len, reverse=True):
        text = text.replace(t, "{time}")
    return text
