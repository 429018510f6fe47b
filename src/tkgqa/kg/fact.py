"""``Fact``: one temporal KG statement ``(subject, relation, object, start, end)``.

Names are spelled as in the source file (``Barack_Obama``, ``Q76``); display labels live in the store
(:meth:`tkgqa.kg.KGStore.label`). Point events have ``start == end``; ``None`` is an open end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Literal

from ..time import Interval, TimeArg, TimePoint, parse_bound


class _Same(Enum):
    """The default ``end`` of :meth:`Fact.of`: the same as ``start`` (a point event)."""

    START = "start"


#: ``Fact.of(..., end=SAME_AS_START)``, the default: the fact is a point event (its end is its start).
SAME_AS_START: Final = _Same.START


@dataclass(frozen=True, slots=True)
class Fact:
    subject: str
    relation: str
    object: str
    start: TimePoint | None = None
    end: TimePoint | None = None

    @classmethod
    def of(
        cls,
        subject: str,
        relation: str,
        object: str,
        start: TimeArg | None = None,
        end: TimeArg | Literal[_Same.START] | None = SAME_AS_START,
    ) -> Fact:
        """A fact with its times given as people write them, each read by :meth:`TimePoint.of`::

            Fact.of("Barack_Obama", "Make_a_visit", "China", "2014-11-10")   # a point event
            Fact.of("Roberto_Baggio", "member_of_sports_team", "Juventus", 1990, 1995)
            Fact.of("Angela_Merkel", "head_of_government", "Germany", 2005, None)  # still true (open end)

        ``end`` left out is ``start`` (a point event); ``None`` is an open end. A time that cannot be read
        is a :class:`~tkgqa.errors.DataError` saying which forms are accepted."""
        first = None if start is None else TimePoint.of(start)
        last = first if end is SAME_AS_START else (None if end is None else TimePoint.of(end))
        return cls(subject, relation, object, first, last)

    @property
    def interval(self) -> Interval:
        return Interval(self.start, self.end)

    @property
    def is_point(self) -> bool:
        return self.start is not None and self.start == self.end

    @property
    def time(self) -> TimePoint | None:
        """The start time (the event time for point events)."""
        return self.start

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with ISO times (``None`` for open ends)."""
        return {
            "subject": self.subject,
            "relation": self.relation,
            "object": self.object,
            "start": self.start.iso() if self.start else None,
            "end": self.end.iso() if self.end else None,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Fact:
        start = parse_bound(d.get("start"))
        end = parse_bound(d.get("end")) if "end" in d else start
        return cls(str(d["subject"]), str(d["relation"]), str(d["object"]), start, end)

    def time_text(self) -> str:
        if self.is_point:
            return str(self.start)
        return f"{self.start or '?'} to {self.end or '?'}"

    def __str__(self) -> str:
        return f"({self.subject}, {self.relation}, {self.object}, {self.time_text()})"


def display_name(name: str) -> str:
    """ICEWS/MultiTQ spelling → words: ``Barack_Obama`` → ``Barack Obama``."""
    return name.replace("_", " ").strip()


def label_of(name: str, labels: Mapping[str, str], display_underscores: bool = True) -> str:
    """The label a store shows for ``name``: its entry in ``labels``, else the name (in words when
    ``display_underscores``: :func:`display_name`)."""
    found = labels.get(name)
    if found is not None:
        return found
    return display_name(name) if display_underscores else name
