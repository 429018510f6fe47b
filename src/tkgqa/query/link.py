"""The one question linker: the KG entities a question mentions, its time mentions and its masked text.

Every method finds a question's entities here (ARI, the KG-RAG baseline, CIK-LLM, TimeR4, LPKG, R3 and the
diagnostics). Mentions come from the shared :class:`~tkgqa.query.text.mentions.MentionIndex` (ICEWS role
names, demonyms, fuzzy spans; built once per KG and rebuilt when the KG grows) and the one time-mention
reader (:func:`~tkgqa.query.text.timeref.find_times`), whose spans are blocked out of entity matching.
:meth:`QuestionLinker.read` is that one path; the rest chooses among what it found.

Where the users differ, the difference is an option of the linker (:class:`LinkerOptions`):

* ``given`` — how the question's own annotation (``Question.entities`` that are in the KG, e.g.
  CronQuestions QIDs) joins the text's mentions: ``instead`` of them when there is any (CIK-LLM, TimeR4,
  LPKG, R3: the default) or ``first``, followed by them (ARI's and KG-RAG's anchors,
  :meth:`QuestionLinker.anchors`);
* ``block_time_cues`` — whether the cue word in front of a time ("in 2015", "before May 2010") is blocked
  out of entity matching with the time (default) or only the time itself (the anchors' setting, which masks
  "in {time}" and leaves the cue word to the entity matcher);
* ``index`` — the store the mention index is built over: the live store behind a snapshot (one index for
  every snapshot of a KG; default) or the store as given (the anchors' setting: a snapshot gets its own
  index, whose choice between entities sharing a label goes by the snapshot's fact counts).

:class:`QuestionAnchors` (what ARI's knowledge-based part starts from) adds the relations of the entities'
1-hop subgraph and the question's times; the masked question (entities → ``{entity}``, times → ``{time}``)
clusters ARI's history memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import assert_never

from ..datasets.base import Question
from ..kg.base import KGStore
from ..time import TimePoint, try_parse_time
from .resources import PerKG
from .text.mentions import MentionIndex
from .text.timeref import TimeMention, find_times
from .text.words import Token, tokenize


class GivenEntities(StrEnum):
    """How the question's annotated entities (those in the KG) join the entities found in its text."""

    INSTEAD = "instead"  # the annotation when it has any, else the text's mentions
    FIRST = "first"  # the annotation first, then the text's mentions


class IndexScope(StrEnum):
    """Which store the mention index is built over."""

    LIVE = "live"  # the live store behind a snapshot (one index for all its snapshots)
    STORE = "store"  # the store as given (a snapshot gets its own index)


@dataclass(frozen=True)
class LinkerOptions:
    """The linker's settings (see the module docstring)."""

    max_entities: int = 3
    given: GivenEntities = GivenEntities.INSTEAD
    block_time_cues: bool = True
    index: IndexScope = IndexScope.LIVE


@dataclass(frozen=True)
class TextLinks:
    """What :meth:`QuestionLinker.read` finds in a text: every entity mentioned (left to right, without
    duplicates, not cut at ``max_entities``), the times mentioned and the masked text."""

    entities: tuple[str, ...]
    times: tuple[TimePoint, ...]
    masked: str


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


def base_store(kg: KGStore) -> KGStore:
    """The live store behind a snapshot (entity vocabulary and labels are shared), else ``kg``."""
    return kg.live


class QuestionLinker:
    """Finds the KG entities of questions over any number of KGs (one instance per method; the mention
    indexes are cached per KG). See the module docstring."""

    def __init__(
        self,
        max_entities: int = 3,
        *,
        given: GivenEntities = GivenEntities.INSTEAD,
        block_time_cues: bool = True,
        index: IndexScope = IndexScope.LIVE,
    ) -> None:
        self.options = LinkerOptions(max_entities, given, block_time_cues, index)
        self._indexes: PerKG[MentionIndex] = PerKG(MentionIndex, size=4)

    @classmethod
    def anchors(cls, max_entities: int = 2) -> QuestionLinker:
        """The settings of ARI's and KG-RAG's anchors: annotation first, cue words open, per-store index."""
        return cls(max_entities, given=GivenEntities.FIRST, block_time_cues=False, index=IndexScope.STORE)

    @property
    def max_entities(self) -> int:
        return self.options.max_entities

    def mention_index(self, kg: KGStore) -> MentionIndex:
        match self.options.index:
            case IndexScope.LIVE:
                return self._indexes.get(base_store(kg))
            case IndexScope.STORE:
                return self._indexes.get(kg)
            case other:
                assert_never(other)

    def read(self, text: str, kg: KGStore) -> TextLinks:
        """The one entity-finding path: time mentions first, then entity mentions outside them."""
        tokens = tokenize(text)
        times = find_times(text, tokens)
        masked_times = {k for t in times for k in range(_core_start(t, tokens), t.end)}
        if self.options.block_time_cues:
            blocked = {k for t in times for k in range(t.start, t.end)}
        else:
            blocked = set(masked_times)
        found = self.mention_index(kg).find(tokens, blocked)
        mentions = sorted(found, key=lambda m: (m.start, -m.end))
        mask: dict[int, str] = dict.fromkeys(masked_times, "{time}")
        for m in mentions:
            for k in range(m.start, m.end):
                mask[k] = "{entity}"
        masked = _join_masked([t.orig for t in tokens], mask)
        entities = tuple(dict.fromkeys(m.entity for m in mentions))
        return TextLinks(entities, tuple(t.point for t in times), masked)

    def detect(self, text: str, kg: KGStore) -> list[str]:
        """Entities mentioned in ``text``, left to right, without duplicates (at most ``max_entities``)."""
        return list(self.read(text, kg).entities[: self.max_entities])

    def __call__(self, question: Question | str, kg: KGStore) -> list[str]:
        """The question's entities: its annotation and the text's mentions as ``given`` says."""
        if isinstance(question, str):
            return self.detect(question, kg)
        return self._choose(_annotated(question, kg), self.read(question.text, kg).entities)

    def link(self, question: Question, kg: KGStore) -> LinkedQuestion:
        """The question's anchors (entities, times, 1-hop relations), masked text and text mentions."""
        found = self.read(question.text, kg)
        entities = self._choose(_annotated(question, kg), found.entities)
        given_times = [t for t in (try_parse_time(x) for x in question.times) if t is not None]
        anchors = QuestionAnchors(
            entities=tuple(entities),
            times=tuple(dict.fromkeys([*given_times, *found.times])),
            out_relations={e: entity_relations(kg, e, True) for e in entities},
            in_relations={e: entity_relations(kg, e, False) for e in entities},
        )
        return LinkedQuestion(anchors, found.masked, found.entities)

    def _choose(self, given: list[str], found: tuple[str, ...]) -> list[str]:
        match self.options.given:
            case GivenEntities.INSTEAD:
                chosen = given or list(found)
            case GivenEntities.FIRST:
                chosen = list(dict.fromkeys([*given, *found]))
            case other:
                assert_never(other)
        return chosen[: self.max_entities]


def _annotated(question: Question, kg: KGStore) -> list[str]:
    return [e for e in question.entities if kg.has_entity(e)]


def entity_relations(kg: KGStore, entity: str, as_subject: bool) -> tuple[str, ...]:
    """The entity's relations as subject (or object), most frequent first."""
    facts = kg.facts(subject=entity) if as_subject else kg.facts(object=entity)
    counts: dict[str, int] = {}
    for f in facts:
        counts[f.relation] = counts.get(f.relation, 0) + 1
    return tuple(sorted(counts, key=lambda r: (-counts[r], r)))


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
