"""The service's KG and what is derived from it (linkers, autocomplete, as-of snapshots), kept consistent when
facts are appended (``POST /api/kg/facts``, only with ``tkgqa serve --allow-append``). No FastAPI here.

Appends take a lock and rebuild the linkers and the autocomplete index; the snapshots are views of the live
store, so they see the new facts. Method instances keep per-KG caches, so the app drops them after an append
(:meth:`tkgqa.service.jobs.MethodPool.reset`): the next question sees the new facts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from ..errors import DataError
from ..kg.base import KGStore
from ..kg.builder import FactBuilder, parse_delimited
from ..kg.fact import Fact
from ..time.point import parse_as_of
from .queries import EntityIndex, KGLinkers

MAX_APPEND_LINES = 1000
MAX_SNAPSHOTS = 8
MAX_FIELD_CHARS = 200


@dataclass(frozen=True)
class Derived:
    """What the endpoints read of one version of the KG."""

    linkers: KGLinkers
    entities: EntityIndex


class LiveKG:
    """The served KG: ``kg``, its :class:`Derived` views, as-of snapshots, and appends."""

    def __init__(self, kg: KGStore) -> None:
        self.kg = kg
        self._lock = threading.Lock()
        self._snapshots: OrderedDict[str, KGStore] = OrderedDict()
        self.derived = self._derive()
        self.version = 0

    def _derive(self) -> Derived:
        linkers = KGLinkers.from_kg(self.kg)
        return Derived(linkers, EntityIndex(self.kg, linkers.entities))

    def at(self, as_of: str | None) -> KGStore:
        """The KG as of ``as_of`` (read by :func:`tkgqa.time.parse_as_of`: a date, e.g. ``2014-06``; ``None``,
        empty or ``all``: all of it). DataError for a date that does not parse."""
        point = parse_as_of(as_of)
        if point is None:
            return self.kg
        key = point.iso()
        with self._lock:
            snap = self._snapshots.get(key)
            if snap is None:
                snap = self.kg.as_of(point)
                self._snapshots[key] = snap
                while len(self._snapshots) > MAX_SNAPSHOTS:
                    self._snapshots.popitem(last=False)
            self._snapshots.move_to_end(key)
            return snap

    def append(self, facts: list[Fact]) -> int:
        """Add ``facts`` (duplicates skipped); returns how many were new."""
        with self._lock:
            added = self.kg.add(facts)
            if added:
                self.derived = self._derive()
                self.version += 1
            return added


def persists_appends(kg: KGStore) -> bool:
    """Whether appends to ``kg`` outlive the process: a store backed by a file it writes (a DuckDB store
    opened read-write). A KG file loaded into memory (TSV, MultiTQ…) keeps appends only until restart."""
    return getattr(kg, "path", None) is not None and not getattr(getattr(kg, "_sh", None), "read_only", True)


def parse_fact_lines(text: str, source: str = "request") -> list[Fact]:
    """Facts of tab-separated lines ``subject, relation, object, start[, end]`` (blank lines and ``#``
    comments skipped; spaces around a field dropped), read by the TSV loader's own code
    (:class:`~tkgqa.kg.builder.FactBuilder`): the same names rule (:mod:`tkgqa.kg.validate`: NFC, no
    control or invisible characters), the same times, and an empty end field is ongoing (open), a 4-field
    line an event. Only ``\n`` ends a line (U+2028 inside a field is refused, not a line break). Every bad
    line is reported as ``source:LINE: problem`` in one DataError."""
    lines = text.split("\n")
    if len(lines) > MAX_APPEND_LINES:
        raise DataError(f"{source}: {len(lines)} lines; at most {MAX_APPEND_LINES} per request")
    rows: list[tuple[int, str]] = []
    problems: list[str] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if any(len(f) > MAX_FIELD_CHARS for f in fields):
            problems.append(f"{source}:{number}: a field over {MAX_FIELD_CHARS} characters")
            continue
        rows.append((number, "\t".join(fields)))
    b = FactBuilder(source, "tsv", strict=False)
    parse_delimited(b, rows, (4, 5))
    problems += b.errors
    n_bad = len(problems) - len(b.errors) + b.n_skipped
    if problems:
        more = f" (and {n_bad - len(problems)} more)" if n_bad > len(problems) else ""
        raise DataError("; ".join(problems[:20]) + more)
    facts = b.facts()
    if not facts:
        raise DataError(f"{source}: no facts given (one per line: subject<TAB>relation<TAB>object<TAB>start)")
    return facts
