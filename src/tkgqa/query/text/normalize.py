"""The one answer normaliser, used by every method, diagnostic and the evaluation harness.

:func:`normalize_answer` (the rules are documented once, in :mod:`tkgqa.eval.scoring`):

1. A string that parses as a time becomes its ISO form at the granularity written (``"May 2012"`` →
   ``2012-05``, ``"Jun 25th, 2006"`` → ``2006-06-25``).
2. Anything else becomes its text form (:func:`normalize_text`, the same function the KG linker matches
   names with): accents stripped, case folded, ``_`` and punctuation → single spaces
   (``Côte_d'Ivoire`` → ``cote d ivoire``, ``Citizen_(North_Korea)`` → ``citizen north korea``); if that
   text parses as a time (``march-2015``) rule 1 applies to it. Idempotent.

:func:`answer_time` reads a gold answer as a time only when it is written as one (it starts with a digit:
``2012-05``, ``14 October 2015``) — the coverage checks and ARI's gold matching compare such answers at
their own granularity.
"""

from __future__ import annotations

from ...kg.linking import normalize as normalize_text
from ...time import TimePoint, try_parse_time

__all__ = ["answer_time", "normalize_answer", "normalize_text"]


def normalize_answer(text: str) -> str:
    """Normal form of an answer: ISO time at the granularity written, else the text form."""
    raw = str(text).strip()
    point = try_parse_time(raw)
    if point is not None:
        return point.iso()
    s = normalize_text(raw)
    point = try_parse_time(s)
    return point.iso() if point is not None else s


def answer_time(text: str) -> TimePoint | None:
    """The time a gold answer is written as (it starts with a digit and parses), else ``None``."""
    stripped = str(text).strip()
    if not stripped or not stripped[0].isdigit():
        return None
    return try_parse_time(stripped)
