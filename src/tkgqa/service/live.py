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
from ..kg.fact import Fact
from ..time.parse import try_parse_time
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
        """The KG as of ``as_of`` (a date, e.g. ``2014-06``; ``None`` or empty: all of it). DataError for a
        date that does not parse."""
        text = (as_of or "").strip()
        if not text:
            return self.kg
        point = try_parse_time(text)
        if point is None:
            raise DataError(f"as_of {text[:60]!r} is not a date; use e.g. 2014, 2014-06 or 2014-06-30")
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


def parse_fact_lines(text: str, source: str = "request") -> list[Fact]:
    """Facts of tab-separated lines ``subject, relation, object, start[, end]`` (blank lines and ``#``
    comments skipped). Every bad line is reported as ``source:LINE: problem`` in one DataError."""
    facts: list[Fact] = []
    problems: list[str] = []
    lines = text.splitlines()
    if len(lines) > MAX_APPEND_LINES:
        raise DataError(f"{source}: {len(lines)} lines; at most {MAX_APPEND_LINES} per request")
    for number, raw in enumerate(lines, start=1):
        line = raw.strip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) not in (4, 5):
            problems.append(
                f"{source}:{number}: expected 4 or 5 tab-separated fields (subject, relation, object, start"
                f"[, end]), got {len(fields)}"
            )
            continue
        if any(not f for f in fields[:3]) or any(len(f) > MAX_FIELD_CHARS for f in fields):
            problems.append(
                f"{source}:{number}: subject, relation and object must be 1–{MAX_FIELD_CHARS} chars"
            )
            continue
        start = try_parse_time(fields[3])
        end = try_parse_time(fields[4]) if len(fields) == 5 and fields[4] else start
        if start is None or end is None:
            bad = fields[3] if start is None else fields[4]
            problems.append(
                f"{source}:{number}: cannot parse time {bad[:60]!r}; use e.g. 2015, 2015-03, 2015-03-21"
            )
            continue
        if end.last_day < start.first_day:
            problems.append(f"{source}:{number}: the end {end.iso()} is before the start {start.iso()}")
            continue
        facts.append(Fact(fields[0], fields[1], fields[2], start, end))
    if problems:
        more = f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""
        raise DataError("; ".join(problems[:20]) + more)
    if not facts:
        raise DataError(f"{source}: no facts given (one per line: subject<TAB>relation<TAB>object<TAB>start)")
    return facts
