"""The ``KGStore`` protocol every temporal KG backend implements."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from ..time import Interval, TimePoint
from .fact import Fact

TimeQuery = TimePoint | Interval | str | None


@runtime_checkable
class KGStore(Protocol):
    """Read (and append) access to a temporal KG. Names are spelled as in the source data."""

    name: str

    def __len__(self) -> int: ...

    @property
    def entities(self) -> Sequence[str]: ...

    @property
    def relations(self) -> Sequence[str]: ...

    def has_entity(self, name: str) -> bool: ...

    def has_relation(self, name: str) -> bool: ...

    def label(self, name: str) -> str:
        """Human-readable label of an entity or relation (``Barack_Obama`` → ``Barack Obama``)."""
        ...

    def facts(
        self,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        time: TimeQuery = None,
        *,
        limit: int | None = None,
    ) -> list[Fact]:
        """Facts matching every given field, ordered by start time; ``time`` keeps facts that share a day
        with it (a month or year matches the day facts inside it)."""
        ...

    def count(
        self,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        time: TimeQuery = None,
    ) -> int: ...

    def add(self, facts: Iterable[Fact]) -> int:
        """Append facts; queries see them at once. Returns how many were new."""
        ...

    def as_of(self, cutoff: TimePoint | str) -> KGStore:
        """A read-only view with only the facts that start before ``cutoff``."""
        ...

    def time_span(self) -> tuple[TimePoint | None, TimePoint | None]: ...
