"""Grounding shared by every method and diagnostic (CIK-LLM, TimeR4, their coverage analyses): question
entities in a KG, and answer coverage of fact sets.

* :class:`QuestionEntities` finds the KG entities a question mentions: the question's own annotation
  (``Question.entities``, e.g. CronQuestions QIDs) when those are in the KG, otherwise the symbolic
  shared mention detector (`MentionIndex`, built once per KG and rebuilt when
  the KG grows), with time mentions blocked out.
* :func:`answer_covered` says whether a gold answer appears among facts (TimeR4 Figure 3's "answer
  coverage"): an entity answer matches a fact's subject or object after label normalisation; a time answer
  matches a fact's start or end at the answer's granularity (``2012-05`` matches a fact on ``2012-05-03``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..datasets.base import Question
from ..kg import Fact, KGStore
from ..time import TimePoint, try_parse_time
from .resources import PerKG
from .text.mentions import MentionIndex
from .text.normalize import normalize_answer
from .text.timeref import find_times
from .text.words import tokenize


def _gold_time(text: str) -> TimePoint | None:
    stripped = str(text).strip()
    if not stripped or not stripped[0].isdigit():
        return None
    return try_parse_time(stripped)


def fact_mentions(fact: Fact, kg: KGStore | None) -> set[str]:
    """Normalised surface forms of a fact's subject and object (raw name and label)."""
    out: set[str] = set()
    for name in (fact.subject, fact.object):
        out.add(normalize_answer(name))
        if kg is not None:
            out.add(normalize_answer(kg.label(name)))
    return out


def _time_matches(point: TimePoint, fact: Fact) -> bool:
    for bound in (fact.start, fact.end):
        if (
            bound is not None
            and bound.granularity >= point.granularity
            and bound.coarsen(point.granularity) == point
        ):
            return True
    return False


def answer_covered(gold: Sequence[str], facts: Iterable[Fact], kg: KGStore | None = None) -> bool:
    """Whether any gold answer appears in ``facts`` (entity by label, time at its own granularity)."""
    facts = list(facts)
    if not gold or not facts:
        return False
    names: set[str] | None = None
    for answer in gold:
        point = _gold_time(answer)
        if point is not None and any(_time_matches(point, f) for f in facts):
            return True
        if names is None:
            names = set().union(*(fact_mentions(f, kg) for f in facts))
        if normalize_answer(answer) in names:
            return True
    return False


def coverage_at(
    gold: Sequence[str], ranked: Sequence[Fact], ns: Iterable[int], kg: KGStore | None
) -> dict[int, bool]:
    """``{n: answer_covered(gold, ranked[:n])}`` for each ``n``."""
    return {n: answer_covered(gold, ranked[:n], kg) for n in ns}


def base_store(kg: KGStore) -> KGStore:
    """The live store behind a snapshot (entity vocabulary and labels are shared), else ``kg``."""
    return kg.live


class QuestionEntities:
    """Finds the KG entities of a question (see the module docstring). One instance per method."""

    def __init__(self, max_entities: int = 3) -> None:
        self.max_entities = max_entities
        self._indexes: PerKG[MentionIndex] = PerKG(MentionIndex)

    def _index(self, kg: KGStore) -> MentionIndex:
        return self._indexes.get(base_store(kg))

    def __call__(self, question: Question | str, kg: KGStore) -> list[str]:
        if isinstance(question, Question):
            given = [e for e in question.entities if kg.has_entity(e)]
            if given:
                return given[: self.max_entities]
            text = question.text
        else:
            text = question
        return self.detect(text, kg)

    def detect(self, text: str, kg: KGStore) -> list[str]:
        """Entities mentioned in ``text``, left to right, without duplicates."""
        tokens = tokenize(text)
        blocked: set[int] = set()
        for t in find_times(text, tokens):
            blocked.update(range(t.start, t.end))
        mentions = self._index(kg).find(tokens, blocked)
        found = list(dict.fromkeys(m.entity for m in mentions))
        return found[: self.max_entities]
