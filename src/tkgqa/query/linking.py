"""Question → anchors: linked entities, time mentions, the relations of the entities' 1-hop subgraph, and the
masked question (entities → ``{entity}``, times → ``{time}``) used to cluster the history memory.

Mentions come from the shared :class:`~tkgqa.query.text.mentions.MentionIndex` (ICEWS role names, demonyms,
fuzzy spans) and the one time-mention reader (:func:`~tkgqa.query.text.timeref.find_times`). Used by ARI, the
KG-RAG baseline and anyone who needs a question's anchors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..datasets.base import Question
from ..kg.base import KGStore
from ..time import TimePoint, try_parse_time
from .text.mentions import MentionIndex
from .text.timeref import TimeMention, find_times
from .text.words import Token, tokenize


@dataclass(frozen=True)
class QuestionAnchors:
    """What the knowledge-based part starts from: linked entities (subject first), question times and the
    relations of the entities' 1-hop subgraph (with the directions in which they occur)."""

    entities: tuple[str, ...]
    times: tuple[TimePoint, ...] = ()
    out_relations: dict[str, tuple[str, ...]] = field(default_factory=dict)  # entity -> relations as subject
    in_relations: dict[str, tuple[str, ...]] = field(default_factory=dict)  # entity -> relations as object

    def relations(self) -> list[str]:
        seen: dict[str, None] = {}
        for table in (self.out_relations, self.in_relations):
            for e in self.entities:
                for r in table.get(e, ()):
                    seen.setdefault(r, None)
        return list(seen)


@dataclass(frozen=True)
class LinkedQuestion:
    anchors: QuestionAnchors
    masked: str
    mentions: tuple[str, ...] = ()


class QuestionLinker:
    """Links questions over one KG (build once per KG — :class:`~tkgqa.query.PerKG` — and reuse it)."""

    def __init__(self, kg: KGStore, max_entities: int = 2) -> None:
        self.kg = kg
        self.max_entities = max_entities
        self._index = MentionIndex(kg)

    def link(self, question: Question) -> LinkedQuestion:
        entities, times, masked = self._link(question.text)
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

    def _link(self, text: str) -> tuple[list[str], list[TimePoint], str]:
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


def _core_start(mention: TimeMention, tokens: list[Token]) -> int:
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
