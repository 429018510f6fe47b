"""The "KG-supported" diagnostic: could the gold answer be reached in the loaded KG from the question?

A question is *supported* when facts link its entities to a gold answer:

* question entities: ``question.entities`` found in the KG (directly, or through their labels in
  ``extra["entity_labels"]``), else entity labels mentioned in the question text — a longest match of
  normalised KG labels over the normalised question (single stop words never count; a token's plural/
  possessive ``s`` may be dropped: "biebers" → "bieber");
* an entity answer (its id, its KG spelling with ``_``, or its label) needs a fact connecting it to a
  question entity, in either direction;
* a time answer needs a fact at that time (compared at the gold answer's granularity: ``2015`` matches a
  fact on ``2015-03-21``) between two question entities — or, when the question has one entity, of it;
* another value (a number) is supported like an entity when the KG has it as a node;
* every other question entity must be connected too: some fact (at any time: an event the question refers
  to, as in "after X visited Iraq") links it to a question entity or to the answer;
* *at the asked time*: when the question states an explicit time ("in March 2012", "on 2010-05-03",
  "in 2008", "between 1990 and 1995"), the answer's linking fact must stand in the asked relation to it.
  Times and their cue words are read by the shared question-time reader (:func:`tkgqa.query.find_times`,
  the one every method uses) and compared by the one time semantics (:func:`tkgqa.time.holds`): a fact on
  ``2012-03-05`` is "in March 2012", an interval fact must overlap it; "before"/"prior to"/"earlier than":
  it starts before that time begins; "after"/"since"/"following"/"later than": it starts after that time
  ends. Years inside a mentioned entity's name ("2008 Summer Olympics") are no time constraint. Without an
  explicit time, any time counts.

:meth:`SupportChecker.check_loose` keeps the looser earlier definition: one question entity suffices (a
time answer is "supported" by any fact of any question entity at that time; the other entities need no
fact). Comparing the two shows how much of the KG's gap is in the facts the question really asks about.

Questions without gold answers are unsupported. The diagnostic reads the gold answers: it describes the KG,
never feeds a method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..kg.base import KGStore
from ..kg.fact import Fact
from ..query import TimeMention, Token, find_times, normalize_text, tokenize
from ..time import Interval, TemporalRelation, TimeConstraint, TimePoint, try_parse_time

_STOP = """a an and as at be by did do does first for from in is it its last of on or the to was were what
when where which who whom whose why with after before during year month day time"""
STOP_WORDS = frozenset(_STOP.split())
MAX_NGRAM = 12

_RANGE_OPENERS = frozenset({"between", "from"})
_RANGE_JOINERS = frozenset({"and", "to", "until", "till", "through", "-"})


def question_times(text: str, entity_words: set[str] | None = None) -> list[TimeConstraint]:
    """The explicit times a question states, read by :func:`tkgqa.query.find_times` (the reader every
    method uses), with their relation; "between/from A and/to B" is one ``in`` range. A bare year that is
    a word of a mentioned entity's name (``entity_words``) is part of that name, not a time."""
    tokens = tokenize(text)
    mentions = [
        m
        for m in find_times(text, tokens)
        if not (entity_words and m.text.isdigit() and m.text in entity_words)
    ]
    out: list[TimeConstraint] = []
    k = 0
    while k < len(mentions):
        m = mentions[k]
        nxt = mentions[k + 1] if k + 1 < len(mentions) else None
        if nxt is not None and _is_range(tokens, m, nxt) and m.point.first_day <= nxt.point.last_day:
            span = Interval(m.point, nxt.point)
            out.append(TimeConstraint(TemporalRelation.IN, span, f"{m.text}–{nxt.text}"))
            k += 2
            continue
        out.append(TimeConstraint(m.relation or TemporalRelation.IN, m.point, m.text))
        k += 1
    return out


def _is_range(tokens: list[Token], a: TimeMention, b: TimeMention) -> bool:
    """``a`` and ``b`` form "between A and B" / "from A to B"."""
    opener = {tokens[i].text for i in range(max(0, a.start - 3), min(a.start + 1, len(tokens)))}
    between = [t.text for t in tokens[a.end : b.start + 1]]
    return bool(opener & _RANGE_OPENERS) and any(w in _RANGE_JOINERS for w in between)


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
        """``(supported, reason)`` for one question: all its entities linked to a gold answer, at the
        question's explicit time (module docstring)."""
        return self._check(question, linked=True)

    def check_loose(self, question: Any) -> tuple[bool, str]:
        """``(supported, reason)`` where one question entity linked to a gold answer suffices."""
        return self._check(question, linked=False)

    def time_constraints(self, question: Any, entities: list[str] | None = None) -> list[TimeConstraint]:
        """The explicit times of ``question`` (years inside its entities' names excluded)."""
        names = self.question_entities(question) if entities is None else entities
        entity_words: set[str] = set()
        for e in names:
            entity_words.update(normalize_text(self.kg.label(e)).split())
            entity_words.update(normalize_text(e).split())
        return question_times(question.text, entity_words)

    def _check(self, question: Any, *, linked: bool) -> tuple[bool, str]:
        if not question.answers:
            return False, "no gold answer"
        entities = self.question_entities(question)
        if not entities:
            return False, "no question entity found in the KG"
        constraints = self.time_constraints(question, entities)
        aligned = len(question.answer_ids) == len(question.answers)
        ids: Sequence[str | None] = question.answer_ids if aligned else [None] * len(question.answers)
        missing: list[str] = []
        for answer, answer_id in zip(question.answers, ids, strict=True):
            fact = self._support(entities, str(answer), answer_id, question.answer_type, constraints, linked)
            if fact is not None:
                return True, f"supported by {fact}"
            if not self._known(str(answer), answer_id):
                missing.append(str(answer))
        if len(missing) == len(question.answers):
            return False, f"gold answer(s) not in the KG: {missing[:3]}"
        when = ", ".join(f"{c.kind} {c.text}" for c in constraints)
        at = f" at the asked time ({when})" if when else ""
        links = "all of" if linked and len(entities) > 1 else "any of"
        return False, f"no fact links {links} {entities[:5]} to a gold answer{at}"

    def _known(self, answer: str, answer_id: str | None) -> bool:
        return bool(self.gold_entities(answer, answer_id)) or try_parse_time(answer) is not None

    def _support(
        self,
        entities: list[str],
        answer: str,
        answer_id: str | None,
        answer_type: str | None,
        constraints: list[TimeConstraint],
        linked: bool,
    ) -> Fact | None:
        point = try_parse_time(answer) if answer_type != "entity" else None
        if point is not None and not self.gold_entities(answer, answer_id):
            return self._time_support(entities, point, constraints, linked)
        for gold in self.gold_entities(answer, answer_id):
            for e in entities:
                if e == gold:
                    continue
                for fact in self._between(e, gold):
                    if all(c.admits(fact.start, fact.end) for c in constraints):
                        if not linked or self._connected(entities, {e, gold}):
                            return fact
                        break
        return None

    def _between(self, a: str, b: str) -> list[Fact]:
        return [*self.kg.facts(subject=a, object=b), *self.kg.facts(subject=b, object=a)]

    def _connected(self, entities: list[str], reached: set[str]) -> bool:
        """Every question entity outside ``reached`` has a fact with another question entity or one of
        ``reached``."""
        ends = [*entities, *(r for r in reached if r not in entities)]
        return all(
            any(other != x and self._between(x, other) for other in ends)
            for x in entities
            if x not in reached
        )

    def _time_support(
        self, entities: list[str], point: TimePoint, constraints: list[TimeConstraint], linked: bool
    ) -> Fact | None:
        want = point.iso()
        for e in entities:
            if linked and len(entities) > 1:
                candidates = [
                    f
                    for other in entities
                    if other != e
                    for f in self.kg.facts(subject=e, object=other, time=point)
                ]
            else:
                candidates = [*self.kg.facts(subject=e, time=point), *self.kg.facts(object=e, time=point)]
            for fact in candidates:
                if not all(c.admits(fact.start, fact.end) for c in constraints):
                    continue
                if not any(
                    t is not None and t.coarsen(point.granularity).iso() == want
                    for t in (fact.start, fact.end)
                ):
                    continue
                if not linked or self._connected(entities, {fact.subject, fact.object}):
                    return fact
        return None


def kg_supported(
    kg: KGStore, question: Any, checker: SupportChecker | None = None, *, loose: bool = False
) -> tuple[bool, str]:
    """``(supported, reason)``: is a gold answer of ``question`` reachable in ``kg`` from its entities at
    the asked time (from one of them, if ``loose``)? Pass a :class:`SupportChecker` built once when
    checking many questions over the same KG."""
    checker = checker or SupportChecker(kg)
    return checker.check_loose(question) if loose else checker.check(question)
