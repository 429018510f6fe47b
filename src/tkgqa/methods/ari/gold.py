"""Matching answers against gold answers (for the oracle, the history memory's correctness and tests).

Entity answers compare their KG label and name, normalised (case, ``_``/spaces, accents, punctuation);
time answers compare ISO strings at the gold's granularity (``2014-10`` matches ``2014-10-07``'s month).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...kg.base import KGStore
from ...kg.linking import normalize
from ...time import try_parse_time
from .actions import Item


def _gold_times(gold: Iterable[str]) -> list[str]:
    return [g for g in gold if _is_time(g)]


def _is_time(text: str) -> bool:
    t = text.strip()
    return bool(t) and t[0].isdigit() and try_parse_time(t) is not None


def value_matches_gold(kg: KGStore, value: str, gold: Sequence[str]) -> bool:
    """An answer string (entity name, label or ISO time) equals one of the gold answers."""
    if _is_time(value):
        return value.strip() in {g.strip() for g in gold}
    keys = {normalize(value), normalize(kg.label(value)) if kg.has_entity(value) else normalize(value)}
    return any(normalize(g) in keys for g in gold)


def item_matches_gold(kg: KGStore, item: Item, gold: Sequence[str]) -> bool:
    """The item's entity, or its time at a gold time's granularity, is a gold answer."""
    if value_matches_gold(kg, item.value, gold):
        return True
    t = item.time
    if t is None:
        return False
    for g in _gold_times(gold):
        gt = try_parse_time(g)
        if gt is not None and t.coarsen(gt.granularity) == gt:
            return True
    return False


def answers_correct(kg: KGStore, answers: Sequence[str], gold: Sequence[str]) -> bool | None:
    """Hits@1 of ``answers`` against ``gold`` (``None`` when there is no gold)."""
    if not gold:
        return None
    return bool(answers) and value_matches_gold(kg, answers[0], gold)
