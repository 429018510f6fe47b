"""Building a :class:`TemporalKG` from parsed rows: :class:`FactBuilder` (used by every loader) and the
:class:`LoadReport` it attaches as ``kg.load_report``.

Bad rows go through :meth:`FactBuilder.fail`: skipped and counted (lenient, the default of every loader:
the :class:`LoadReport` names the first ones and ``tkgqa eval`` lists them in ``report.json``'s
``warnings``), or a :class:`DataError` with ``file:line`` (``strict``; ``tkgqa eval --strict``). Names
follow the one rule of :mod:`tkgqa.kg.validate` (NFC, no control/format characters). Messages quote at most
:data:`~tkgqa.sanitize.ECHO_CHARS` characters of a bad value.
"""

from __future__ import annotations

import unicodedata
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import DataError
from ..sanitize import shorten
from ..time import NEG_INF, POS_INF, Granularity, TimePoint, civil_from_days, parse_bound
from .fact import Fact
from .formats import format_names
from .memory import COLUMNS, TemporalKG
from .validate import name_problem

#: Added to the message of a malformed entry in strict mode (named by its CLI flag).
STRICT_HINT = "strict mode stops at a malformed entry; without --strict it is skipped with a counted warning"

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

    def warning(self) -> str | None:
        """One sentence for ``report.json``'s ``warnings`` when malformed entries were skipped, naming the
        first ones; ``None`` when none were."""
        if not self.n_skipped:
            return None
        shown = "; ".join(self.first_errors[:5])
        more = f" (and {self.n_skipped - 5} more)" if self.n_skipped > 5 else ""
        entries = "entry" if self.n_skipped == 1 else "entries"
        return f"KG {self.path}: {self.n_skipped} malformed {entries} skipped: {shown}{more}"


def load_warnings(kg: object) -> list[str]:
    """What loading ``kg`` skipped, as sentences (its :class:`LoadReport`'s warning; ``[]`` when nothing)."""
    report = getattr(kg, "load_report", None)
    warning = report.warning() if isinstance(report, LoadReport) else None
    return [warning] if warning else []


class FactBuilder:
    """Accumulates encoded columns, interning names and memoising time parses; reports bad lines."""

    def __init__(self, path: str, fmt: str, strict: bool) -> None:
        self.path, self.format, self.strict = path, fmt, strict
        self.hint = STRICT_HINT  # what a strict failure adds (how to get past it)
        self.ent: dict[str, int] = {}
        self.rel: dict[str, int] = {}
        self.cols: tuple[array[int], ...] = tuple(array("q") for _ in range(7))  # 8 bytes a value
        self.times: dict[str, tuple[int, int, int] | None] = {}
        self.labels: dict[str, str] = {}
        self.n_lines = self.n_skipped = self.n_duplicates = 0
        self.errors: list[str] = []
        #: the seven columns as int64 arrays when a vectorised reader filled them (then ``cols`` is unused)
        self.encoded: dict[str, npt.NDArray[np.int64]] | None = None

    def fail(self, line: int | None, message: str) -> None:
        """Raise (strict) or count a bad line (lenient)."""
        if self.strict:
            raise DataError(f"{message} ({self.hint})", path=self.path, line=line)
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
        self.append(s, r, o, t0, t1, g0, g1, line=line)

    def add_points(
        self, s: str, r: str, o: str, p0: TimePoint, p1: TimePoint, *, line: int | None = None
    ) -> None:
        self.append(s, r, o, p0.first_day, p1.last_day, int(p0.granularity), int(p1.granularity), line=line)

    def append(
        self, s: str, r: str, o: str, t0: int, t1: int, g0: int, g1: int, *, line: int | None = None
    ) -> bool:
        """Add one encoded fact; a name breaking the rule of :mod:`tkgqa.kg.validate` fails the line
        (checked once per new name: names are interned in NFC)."""
        ent, rel, c = self.ent, self.rel, self.cols
        si, ri, oi = ent.get(s), rel.get(r), ent.get(o)
        if si is None or ri is None or oi is None:
            found = self._intern(line, (s, ent, "subject"), (r, rel, "relation"), (o, ent, "object"))
            if found is None:
                return False
            si, ri, oi = found
        c[0].append(si)
        c[1].append(ri)
        c[2].append(oi)
        c[3].append(t0)
        c[4].append(t1)
        c[5].append(g0)
        c[6].append(g1)
        return True

    def _intern(self, line: int | None, *names: tuple[str, dict[str, int], str]) -> tuple[int, ...] | None:
        """Ids of the names (new ones checked, then interned in NFC); ``None`` (the line failed) if one
        breaks the rule — then none is interned."""
        for name, table, what in names:
            problem = None if name in table else name_problem(name)
            if problem is not None:
                self.fail(line, f"the {what} {problem}")
                return None
        ids = []
        for name, table, _ in names:
            i = table.get(name)
            if i is None:
                canon = unicodedata.normalize("NFC", name)
                i = table.get(canon)
                if i is None:
                    i = table[canon] = len(table)
            ids.append(i)
        return tuple(ids)

    def facts(self) -> list[Fact]:
        """The facts added so far, in order (no duplicates removed): what a small parse (an append
        request) hands to a store."""
        ent, rel = list(self.ent), list(self.rel)
        points: dict[tuple[int, int], TimePoint] = {}

        def point(day: int, gran: int) -> TimePoint | None:
            if not gran:
                return None
            found = points.get((day, gran))
            if found is None:
                found = points[(day, gran)] = TimePoint(*civil_from_days(day)).coarsen(Granularity(gran))
            return found

        return [
            Fact(ent[s], rel[r], ent[o], point(t0, g0), point(t1, g1))
            for s, r, o, t0, t1, g0, g1 in zip(*self.cols, strict=True)
        ]

    def build(
        self, name: str, labels: Mapping[str, str] | None = None, *, skipped: Sequence[str] = ()
    ) -> TemporalKG:
        """The store, keeping the first of duplicate facts (same names and day span). A file whose every
        entry was malformed is a :class:`DataError` (:meth:`nothing_read`); ``skipped``: what a loader that
        counts its own skips (``n_skipped``) says of them."""
        columns = self.encoded or {
            c: np.frombuffer(v, dtype=np.int64) for c, v in zip(COLUMNS, self.cols, strict=True)
        }
        keep = _first_occurrences([columns[c] for c in ("s", "r", "o", "t0", "t1")])
        if keep is not None:
            self.n_duplicates += int(len(keep) - keep.sum())
            columns = {c: v[keep] for c, v in columns.items()}
        all_labels = dict(self.labels)
        all_labels.update(labels or {})
        if self.n_skipped and not len(columns["s"]):
            raise self.nothing_read([*skipped, *self.errors])
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

    def nothing_read(self, problems: Sequence[str]) -> DataError:
        """The error of a file whose every entry was malformed: a KG of 0 facts is never what was meant
        (most often another format, or a file that is no KG)."""
        first = problems[0] if problems else "no detail kept"
        return DataError(
            f"no fact could be read as {self.format}: "
            + (f"all {self.n_skipped} entries were" if self.n_skipped > 1 else "its one entry was")
            + f" malformed (first: {first}). Is it a {self.format} KG file? Name its format (--format, or "
            f"load_kg's format=: {', '.join(format_names())}) or fix the file",
            path=self.path,
        )


def _first_occurrences(rows: Sequence[npt.NDArray[np.int64]]) -> npt.NDArray[np.bool_] | None:
    """Mask of the facts of the columns ``rows`` (s, r, o, t0, t1) that repeat no earlier fact; ``None`` if
    none repeats. Sorted on packed keys (:func:`_packed`), first by (s, r, o) alone: only the facts whose
    (s, r, o) repeats are then sorted on all of it."""
    n = len(rows[0])
    if n < 2:
        return None
    keys = _packed(rows)
    first = np.sort(keys[0])
    repeated = first[1:][first[1:] == first[:-1]]
    if not len(repeated):
        return None
    repeated = np.unique(repeated)
    at = np.minimum(np.searchsorted(repeated, keys[0]), len(repeated) - 1)
    sub = np.flatnonzero(repeated[at] == keys[0])  # the facts whose (s, r, o) repeats, in file order
    sub_keys = np.stack([k[sub] for k in keys])
    order = np.lexsort(sub_keys[::-1])  # stable: equal facts stay in file order
    ordered = sub_keys[:, order]
    repeat = (ordered[:, 1:] == ordered[:, :-1]).all(axis=0)
    if not repeat.any():
        return None
    keep = np.ones(n, dtype=bool)
    keep[sub[order[1:][repeat]]] = False
    return keep


def _packed(rows: Sequence[npt.NDArray[np.int64]]) -> list[npt.NDArray[np.int64]]:
    """The columns (s, r, o, t0, t1) as fewer keys that are equal exactly where the facts are (s, r, o in one
    int64 and t0, t1 in another when their ranges allow)."""
    low = [int(v.min()) for v in rows]
    span = [int(v.max()) - lo + 1 for v, lo in zip(rows, low, strict=True)]
    if span[0] * span[1] * span[2] >= 1 << 62 or span[3] * span[4] >= 1 << 62:
        return list(rows)
    s, r, o, t0, t1 = ((v - lo) if lo else v for v, lo in zip(rows, low, strict=True))
    return [(s * span[1] + r) * span[2] + o, t0 * span[4] + t1]


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
