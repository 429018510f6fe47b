"""Matching answers against gold answers (for the oracle, the history memory's correctness and tests).

Answers are compared by the project's one answer normaliser (:func:`tkgqa.query.normalize_answer`: times as
ISO at the granularity written, names by their text form), entity answers by their KG label and name; an
item's time also matches a gold time at the gold's granularity (``2014-10`` matches ``2014-10-07``'s month).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...kg.base import KGStore
from ...query.text.normalize import answer_time, normalize_answer
from ...time import TimePoint
from .actions import Item


def _gold_times(gold: Iterable[str]) -> list[TimePoint]:
    return [t for t in map(answer_time, gold) if t is not None]


def value_matches_gold(kg: KGStore, value: str, gold: Sequence[str]) -> bool:
    """An answer string (entity name, label or ISO time) equals one of the gold answers."""
    keys = {normalize_answer(value)}
    if kg.has_entity(value):
        keys.add(normalize_answer(kg.label(value)))
    return any(normalize_answer(g) in keys for g in gold)


def item_matches_gold(kg: KGStore, item: Item, gold: Sequence[str]) -> bool:
    """The item's entity, or its time at a gold time's granularity, is a gold answer."""
    if value_matches_gold(kg, item.value, gold):
        return True
    t = item.time
    if t is None:
        return False
    return any(t.coarsen(gt.granularity) == gt for gt in _gold_times(gold))


def answers_correct(kg: KGStore, answers: Sequence[str], gold: Sequence[str]) -> bool | None:
    """Hits@1 of ``answers`` against ``gold`` (``None`` when there is no gold)."""
    if not gold:
        return None
    return bool(answers) and value_matches_gold(kg, answers[0], gold)
