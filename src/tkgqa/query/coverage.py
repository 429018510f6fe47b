"""Answer coverage of fact sets, shared by every method and diagnostic (CIK-LLM, TimeR4, their coverage
analyses; question entities are found by the one linker, :mod:`tkgqa.query.link`).

* :func:`answer_covered` says whether a gold answer appears among facts (TimeR4 Figure 3's "answer
  coverage"): an entity answer matches a fact's subject or object after label normalisation; a time answer
  matches a fact's start or end at the answer's granularity (``2012-05`` matches a fact on ``2012-05-03``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..kg import Fact, KGStore
from ..time import TimePoint
from .text.normalize import answer_time, normalize_answer


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
        point = answer_time(answer)
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
