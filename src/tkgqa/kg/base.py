"""The ``KGStore`` protocol every temporal KG backend implements.

Callers use only these methods: a backend's speed comes from its own implementation of them, never from a
caller checking for a concrete class. What every store guarantees (``tests/kg/test_store_conformance.py``
checks it; a new backend joins that suite with one line):

* **Insertion order.** A store keeps its facts in the order they were added; iterating yields them in that
  order, and appends go at the end, so a fact's position never changes (``FactTable`` ids rely on it).
* **Duplicates.** A fact is a duplicate when its subject, relation, object and day span (first day of its
  start, last day of its end; an open end is unbounded) equal a stored fact's; :meth:`KGStore.add` skips it.
* **Order of results.** ``facts()`` and ``incident()`` return facts by start day (open starts first), ties in
  insertion order.
* **Time windows.** A ``time`` argument (``TimePoint``, ``Interval`` or text such as ``"2015-03"``) keeps the
  facts sharing at least one day with it: a month matches the day facts inside it, a day matches the month
  fact containing it, and an open end runs on forever (an atemporal fact matches every window).
* **Snapshots.** ``as_of(cutoff)`` is a read-only view of what was known when ``cutoff`` began (day ``c``,
  its first day): the facts that *start* before ``c`` (open starts included), each *clipped at* ``c``: a
  fact still running on day ``c`` (its end's last day is ``c`` or later) is shown with an open end, "still
  true at the cutoff" (``(Anderton, team, Tottenham, 1992, 2004).as_of(2000)`` reads ``1992–open``), so no
  date after the cutoff ever shows. The same holds for a coarse point straddling the cutoff (a 2015-03 event
  seen as of 2015-03-21 reads ``2015-03–open``) and for an open start (``None–2004`` as of 2000 has no
  time). Every query of the view (time windows, ``hop``, ``time_span``) sees the clipped facts; two live
  facts that differ only after the cutoff read the same in the view and both stay. The view reads the live
  store, so facts appended later that start before the cutoff appear in it. It shares the live store's
  vocabulary (``entities``, ``relations``, ``label``), and ``live`` returns that store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol, runtime_checkable

from ..time import NEG_INF, POS_INF, Interval, TimeArg, TimePoint, span_of
from .fact import Fact

TimeQuery = TimePoint | Interval | str | None


def query_window(time: TimeQuery) -> tuple[int, int]:
    """The closed day window ``(first_day, last_day)`` a query's ``time`` selects, as every store reads it:
    all days for ``None``, text by :meth:`~tkgqa.time.Interval.parse` (the last 4,096 texts kept parsed)."""
    if time is None:
        return (NEG_INF, POS_INF)
    return _text_window(time) if isinstance(time, str) else span_of(time)


@lru_cache(maxsize=4096)
def _text_window(text: str) -> tuple[int, int]:
    return span_of(Interval.parse(text))


@dataclass(frozen=True, slots=True)
class Hop:
    """One breadth-first step of :meth:`KGStore.hop`.

    ``n_facts``: how many facts the step met; ``relations``: relation → how many of those facts use it;
    ``neighbors``: the entities those facts reach outside the frontier and the visited set, most fact ends
    first (ties by name), at most ``max_neighbors`` of them."""

    n_facts: int
    relations: dict[str, int]
    neighbors: tuple[str, ...]


def clip_at(fact: Fact, cut_day: int) -> Fact:
    """``fact`` as an ``as_of`` view starting on day ``cut_day`` shows it: an end whose last day is
    ``cut_day`` or later becomes open ("still true at the cutoff"); other facts are returned unchanged."""
    if fact.end is None or fact.end.last_day < cut_day:
        return fact
    return Fact(fact.subject, fact.relation, fact.object, fact.start, None)


def entity_names(names: str | Iterable[str]) -> Iterable[str]:
    """``names`` as an iterable of names: a single name is one entity, not its characters."""
    return (names,) if isinstance(names, str) else names


@runtime_checkable
class KGStore(Protocol):
    """Read (and append) access to a temporal KG. Names are spelled as in the source data.

    See the module docstring for the ordering, duplicate, time-window and snapshot rules."""

    name: str

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Fact]:
        """Every fact once, in insertion order."""
        ...

    @property
    def entities(self) -> Sequence[str]: ...

    @property
    def relations(self) -> Sequence[str]: ...

    @property
    def live(self) -> KGStore:
        """The live store this one reads: itself, or for an ``as_of`` view the store it was taken from.
        Views share its vocabulary, so per-KG indexes over entities can be built once, on ``live``."""
        ...

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

    def incident(self, entity: str, *, relation: str | None = None, time: TimeQuery = None) -> list[Fact]:
        """Facts with ``entity`` as subject or object (a self-loop once), optionally only of ``relation``
        and sharing a day with ``time``; ordered by start time. An unknown entity has none."""
        ...

    def hop(
        self,
        frontier: str | Iterable[str],
        *,
        time: TimeQuery = None,
        visited: str | Iterable[str] = (),
        new_facts_only: bool = False,
        max_neighbors: int | None = None,
    ) -> Hop:
        """One breadth-first step from the entities ``frontier``: the facts with subject or object in it
        (each once, sharing a day with ``time`` if given); with ``new_facts_only``, minus the facts touching
        an entity of ``visited`` (already expanded, so those facts were met before). Returns their number,
        their relation counts and the entities they reach outside ``frontier`` and ``visited``, ranked (see
        :class:`Hop`); ``max_neighbors=0`` skips the ranking. Unknown entities are ignored."""
        ...

    def relation_counts(self, entity: str | None = None) -> dict[str, int]:
        """Relation → how many facts use it: over the whole store, or over the facts incident to
        ``entity``. Relations without facts are left out."""
        ...

    def add(self, facts: Iterable[Fact]) -> int:
        """Append facts; queries see them at once. Returns how many were new (duplicates are skipped)."""
        ...

    def as_of(self, cutoff: TimeArg) -> KGStore:
        """A read-only view of the facts that start before ``cutoff``, clipped at it: an end at or after
        the cutoff becomes open (see the module docstring)."""
        ...

    def time_span(self, entity: str | None = None) -> tuple[TimePoint | None, TimePoint | None]:
        """Earliest start and latest end of the facts (only those incident to ``entity`` if given).

        The first is the least start point (points order by first day, then coarser first); the last is
        the end point with the latest last day, a fact with an open end counting by its start point (ties:
        the later first day). ``(None, None)`` when no fact has a known time."""
        ...


@dataclass(frozen=True, slots=True)
class FactQuery:
    """The arguments of :meth:`KGStore.facts` (and :meth:`KGStore.count`, with ``limit`` unset)."""

    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    time: TimeQuery = None
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class HopQuery:
    """The arguments of :meth:`KGStore.hop`."""

    frontier: str | Iterable[str]
    time: TimeQuery = None
    visited: str | Iterable[str] = ()
    new_facts_only: bool = False
    max_neighbors: int | None = None


class StoreBase:
    """Base class of the built-in stores: the public ``facts``, ``count`` and ``hop`` of :class:`KGStore`
    are written once here and call the hooks each store implements (``_query_facts``, ``_query_count``,
    ``_query_hop``), which take the arguments as one frozen :class:`FactQuery` / :class:`HopQuery`.

    A third-party store need not use it: any class with the methods of :class:`KGStore` is a store."""

    def facts(
        self,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        time: TimeQuery = None,
        *,
        limit: int | None = None,
    ) -> list[Fact]:
        """See :meth:`KGStore.facts`."""
        return self._query_facts(FactQuery(subject, relation, object, time, limit))

    def count(
        self,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        time: TimeQuery = None,
    ) -> int:
        """See :meth:`KGStore.count`."""
        return self._query_count(FactQuery(subject, relation, object, time))

    def hop(
        self,
        frontier: str | Iterable[str],
        *,
        time: TimeQuery = None,
        visited: str | Iterable[str] = (),
        new_facts_only: bool = False,
        max_neighbors: int | None = None,
    ) -> Hop:
        """See :meth:`KGStore.hop`."""
        return self._query_hop(HopQuery(frontier, time, visited, new_facts_only, max_neighbors))

    def _query_facts(self, query: FactQuery) -> list[Fact]:
        raise NotImplementedError

    def _query_count(self, query: FactQuery) -> int:
        raise NotImplementedError

    def _query_hop(self, query: HopQuery) -> Hop:
        raise NotImplementedError
