"""Building a :class:`TemporalKG` from parsed rows: :class:`FactBuilder` (used by every loader) and the
:class:`LoadReport` it attaches as ``kg.load_report``.

Bad rows go through :meth:`FactBuilder.fail`: a :class:`DataError` with ``file:line`` (``strict``), or skipped
and counted (lenient). Messages quote at most :data:`~tkgqa.sanitize.ECHO_CHARS` characters of a bad value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import DataError
from ..sanitize import shorten
from ..time import NEG_INF, POS_INF, TimePoint, parse_bound
from .memory import COLUMNS, TemporalKG

_MAX_ERRORS = 10


@dataclass(frozen=True)
class LoadReport:
    """What a loader read: lines seen, facts kept, bad lines skipped (lenient mode) and the first errors."""

    path: str
    format: str
    n_lines: int = 0
    n_facts: int = 0
    n_skipped: int = 0
    n_duplicates: int = 0
    first_errors: tuple[str, ...] = ()
    from_cache: bool = False


class FactBuilder:
    """Accumulates encoded columns, interning names and memoising time parses; reports bad lines."""

    def __init__(self, path: str, fmt: str, strict: bool) -> None:
        self.path, self.format, self.strict = path, fmt, strict
        self.ent: dict[str, int] = {}
        self.rel: dict[str, int] = {}
        self.cols: tuple[list[int], ...] = ([], [], [], [], [], [], [])
        self.times: dict[str, tuple[int, int, int] | None] = {}
        self.labels: dict[str, str] = {}
        self.n_lines = self.n_skipped = self.n_duplicates = 0
        self.errors: list[str] = []

    def fail(self, line: int | None, message: str) -> None:
        """Raise (strict) or count a bad line (lenient)."""
        if self.strict:
            raise DataError(message + " (pass strict=False to skip bad lines)", path=self.path, line=line)
        self.n_skipped += 1
        if len(self.errors) < _MAX_ERRORS:
            self.errors.append(str(DataError(message, path=self.path, line=line)))

    def bound(self, text: str) -> tuple[int, int, int] | None:
        """``(first day, last day, granularity)`` of one interval end (memoised); ``None`` = open.
        Raises DataError (quoting at most :data:`~tkgqa.sanitize.ECHO_CHARS` characters of ``text``)."""
        try:
            return self.times[text]
        except KeyError:
            pass
        try:
            p = parse_bound(text)
        except DataError:
            raise DataError(
                f"cannot parse time {shorten(text)}; use e.g. 2015, 2015-03 or 2015-03-21"
            ) from None
        found = self.times[text] = (p.first_day, p.last_day, int(p.granularity)) if p else None
        return found

    def add(self, line: int, s: str, r: str, o: str, start: str | None, end: str | None) -> None:
        """Add one fact from raw text; ``end=None`` makes a point event (end = start)."""
        if not s or not r or not o:
            self.fail(line, "empty subject, relation or object")
            return
        try:
            b0 = self.bound(start) if start is not None else None
            b1 = b0 if end is None else self.bound(end)
        except DataError as exc:
            self.fail(line, exc.message)
            return
        if end is None and b0 is None:
            self.fail(
                line,
                f"no date ({shorten(start or '')}): a fact with one time column is an event on that date, "
                "e.g. 2014-11-10; fix or drop the line",
            )
            return
        t0, g0 = (b0[0], b0[2]) if b0 else (NEG_INF, 0)
        t1, g1 = (b1[1], b1[2]) if b1 else (POS_INF, 0)
        if t0 > t1:
            self.fail(line, f"start {start} is after end {end}")
            return
        self.append(s, r, o, t0, t1, g0, g1)

    def add_points(self, s: str, r: str, o: str, p0: TimePoint, p1: TimePoint) -> None:
        self.append(s, r, o, p0.first_day, p1.last_day, int(p0.granularity), int(p1.granularity))

    def append(self, s: str, r: str, o: str, t0: int, t1: int, g0: int, g1: int) -> None:
        ent, rel, c = self.ent, self.rel, self.cols
        si = ent.get(s)
        if si is None:
            si = ent[s] = len(ent)
        ri = rel.get(r)
        if ri is None:
            ri = rel[r] = len(rel)
        oi = ent.get(o)
        if oi is None:
            oi = ent[o] = len(ent)
        c[0].append(si)
        c[1].append(ri)
        c[2].append(oi)
        c[3].append(t0)
        c[4].append(t1)
        c[5].append(g0)
        c[6].append(g1)

    def build(self, name: str, labels: Mapping[str, str] | None = None) -> TemporalKG:
        """The store, keeping the first of duplicate facts (same names and day span)."""
        columns = {c: np.asarray(v, dtype=np.int64) for c, v in zip(COLUMNS, self.cols, strict=True)}
        keep = _first_occurrences(np.stack([columns[c] for c in ("s", "r", "o", "t0", "t1")]))
        if keep is not None:
            self.n_duplicates += int(len(keep) - keep.sum())
            columns = {c: v[keep] for c, v in columns.items()}
        all_labels = dict(self.labels)
        all_labels.update(labels or {})
        kg = TemporalKG.from_arrays(list(self.ent), list(self.rel), columns, labels=all_labels, name=name)
        kg.load_report = LoadReport(
            self.path,
            self.format,
            self.n_lines,
            len(kg),
            self.n_skipped,
            self.n_duplicates,
            tuple(self.errors),
        )
        return kg


def _first_occurrences(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_] | None:
    """Mask of the columns of ``rows`` (k × n) that repeat no earlier column; ``None`` if none repeats."""
    n = rows.shape[1]
    if n < 2:
        return None
    order = np.lexsort(rows[::-1])  # stable: equal rows stay in file order
    ordered = rows[:, order]
    repeat = (ordered[:, 1:] == ordered[:, :-1]).all(axis=0)
    if not repeat.any():
        return None
    keep = np.ones(n, dtype=bool)
    keep[order[1:][repeat]] = False
    return keep


def parse_delimited(b: FactBuilder, rows: Iterable[tuple[int, str]], n_cols: tuple[int, ...]) -> None:
    """``s r o start [end]`` rows; 4 columns = point event (if 4 is allowed), else end = 5th column."""
    expected = " or ".join(map(str, n_cols))
    for lineno, line in rows:
        b.n_lines += 1
        parts = line.split("\t")
        n = len(parts)
        if n not in n_cols:
            b.fail(lineno, f"expected {expected} tab-separated columns, got {n}: {shorten(line)}")
            continue
        b.add(lineno, parts[0], parts[1], parts[2], parts[3], parts[4] if n == 5 else None)
