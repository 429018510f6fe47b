"""The "KG-supported" diagnostic: could the gold answer be reached in the loaded KG from the question?

A question is *supported* when some fact links one of its entities to a gold answer:

* question entities: ``question.entities`` found in the KG (directly, or through their labels in
  ``extra["entity_labels"]``), else entity labels mentioned in the question text — a longest match of
  normalised KG labels over the normalised question (single stop words never count; a token's plural/
  possessive ``s`` may be dropped: "biebers" → "bieber");
* an entity answer (its id, its KG spelling with ``_``, or its label) is supported if a fact connects it to a
  question entity, in either direction;
* a time answer is supported if a fact of a question entity starts or ends at that time, compared at the gold
  answer's granularity (``2015`` matches a fact on ``2015-03-21``);
* another value (a number) is supported like an entity when the KG has it as a node.

Questions without gold answers are unsupported. The diagnostic reads the gold answers: it describes the KG,
never feeds a method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..kg.base import KGStore
from ..kg.fact import Fact
from ..time import TimePoint, try_parse_time
from .scoring import normalize_text

_STOP = """a an and as at be by did do does first for from in is it its last of on or the to was were what
when where which who whom whose why with after before during year month day time"""
STOP_WORDS = frozenset(_STOP.split())
MAX_NGRAM = 12


class SupportChecker:
    """Answers :meth:`check` for many questions over one KG (builds the label index once)."""

    def __init__(self, kg: KGStore) -> None:
        self.kg = kg
        self._index: dict[str, list[str]] = {}
        longest = 1
        for name in kg.entities:
            for text in {name, kg.label(name)}:
                key = normalize_text(text)
                if key:
                    names = self._index.setdefault(key, [])
                    if name not in names:
                        names.append(name)
                    longest = max(longest, key.count(" ") + 1)
        self._max_n = min(longest, MAX_NGRAM)

    # --- linking --------------------------------------------------------------------------------------
    def lookup(self, text: str) -> list[str]:
        """KG entity names whose name or label normalises to ``text``'s normal form."""
        return list(self._index.get(normalize_text(text), []))

    def mentions(self, text: str) -> list[str]:
        """Entities mentioned in ``text`` (longest non-overlapping matches, left to right)."""
        tokens = normalize_text(text).split()
        found: list[str] = []
        i = 0
        while i < len(tokens):
            step = 1
            for n in range(min(self._max_n, len(tokens) - i), 0, -1):
                names = self._match(tokens[i : i + n])
                if names:
                    found.extend(x for x in names if x not in found)
                    step = n
                    break
            i += step
        return found

    def _match(self, words: list[str]) -> list[str]:
        if len(words) == 1 and words[0] in STOP_WORDS:
            return []
        names = self._index.get(" ".join(words))
        if not names and len(words[-1]) > 3 and words[-1].endswith("s"):
            names = self._index.get(" ".join([*words[:-1], words[-1][:-1]]))
        return names or []

    def question_entities(self, question: Any) -> list[str]:
        """The question's entities in the KG (annotated ones first, else mentions in the text)."""
        labels = question.extra.get("entity_labels") or {}
        found: list[str] = []
        for e in question.entities:
            candidates = [e] if self.kg.has_entity(e) else self.lookup(str(labels.get(e, "")) or e)
            found.extend(c for c in candidates if c not in found)
        return found or self.mentions(question.text)

    def gold_entities(self, answer: str, answer_id: str | None) -> list[str]:
        for name in (answer_id, answer, answer.replace(" ", "_")):
            if name and self.kg.has_entity(name):
                return [name]
        return self.lookup(answer)

    # --- the check --------------------------------------------------------------------------------------
    def check(self, question: Any) -> tuple[bool, str]:
        """``(supported, reason)`` for one question (see the module docstring)."""
        if not question.answers:
            return False, "no gold answer"
        entities = self.question_entities(question)
        if not entities:
            return False, "no question entity found in the KG"
        aligned = len(question.answer_ids) == len(question.answers)
        ids: Sequence[str | None] = question.answer_ids if aligned else [None] * len(question.answers)
        missing: list[str] = []
        for answer, answer_id in zip(question.answers, ids, strict=True):
            fact = self._support(entities, str(answer), answer_id, question.answer_type)
            if fact is not None:
                return True, f"supported by {fact}"
            if fact is None and not self._known(str(answer), answer_id):
                missing.append(str(answer))
        if len(missing) == len(question.answers):
            return False, f"gold answer(s) not in the KG: {missing[:3]}"
        return False, f"no fact links {entities[:5]} to a gold answer"

    def _known(self, answer: str, answer_id: str | None) -> bool:
        return bool(self.gold_entities(answer, answer_id)) or try_parse_time(answer) is not None

    def _support(
        self, entities: list[str], answer: str, answer_id: str | None, answer_type: str | None
    ) -> Fact | None:
        point = try_parse_time(answer) if answer_type != "entity" else None
        if point is not None and not self.gold_entities(answer, answer_id):
            return self._time_support(entities, point)
        for gold in self.gold_entities(answer, answer_id):
            for e in entities:
                if e == gold:
                    continue
                found = self.kg.facts(subject=e, object=gold, limit=1) or self.kg.facts(
                    subject=gold, object=e, limit=1
                )
                if found:
                    return found[0]
        return None

    def _time_support(self, entities: list[str], point: TimePoint) -> Fact | None:
        want = point.iso()
        for e in entities:
            for fact in (*self.kg.facts(subject=e, time=point), *self.kg.facts(object=e, time=point)):
                for t in (fact.start, fact.end):
                    if t is not None and t.coarsen(point.granularity).iso() == want:
                        return fact
        return None


def kg_supported(kg: KGStore, question: Any, checker: SupportChecker | None = None) -> tuple[bool, str]:
    """``(supported, reason)``: is a gold answer of ``question`` reachable in ``kg`` from its entities?
    Pass a :class:`SupportChecker` built once when checking many questions over the same KG."""
    return (checker or SupportChecker(kg)).check(question)
