"""``TimePoint``: a calendar time at year, month or day granularity.

A point covers a span of days: ``2015`` covers 2015-01-01..2015-12-31, ``2015-03`` the days of March.
Day numbers are proleptic-Gregorian ordinals computed without :mod:`datetime`, so years outside 1..9999
(Wikidata has BCE dates) work too.

Parsing (:func:`parse_time`, :func:`parse_bound`, :func:`split_range`): every notation the benchmarks use.

Accepted (case-insensitive, surrounding words like "in"/"on" ignored): ``2015``, ``2015-03``,
``2015-03-21``, ``2015/03/21``, ISO timestamps ``1994-03-01T00:00:00Z`` (Wikidata's ``+`` prefix too),
``Mar 2015``, ``March, 2015``, ``In Dec, 2008``, ``Jun 25th, 2006``, ``June 25, 2006``, ``25 June 2006``,
``25th of June 2006``, and year intervals ``1990-1995`` / ``1990–1995`` / ``1990 to 1995``.
Years 1 and 2916 are the "unknown" markers of the TimeQuestions/CronQuestions data: :func:`parse_bound`
maps them to ``None`` (open end).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from enum import IntEnum
from functools import total_ordering

from ..errors import DataError


class Granularity(IntEnum):
    """How precisely a time is known; larger is finer."""

    YEAR = 1
    MONTH = 2
    DAY = 3

    @classmethod
    def parse(cls, value: str | Granularity | None) -> Granularity | None:
        if value is None or isinstance(value, Granularity):
            return value
        try:
            return cls[str(value).strip().upper()]
        except KeyError:
            raise DataError(f"unknown time granularity {value!r}; use year, month or day") from None


def is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def days_in_month(year: int, month: int) -> int:
    return 29 if month == 2 and is_leap(year) else _MONTH_DAYS[month - 1]


def days_from_civil(year: int, month: int, day: int) -> int:
    """Day number of a Gregorian date; equals ``date(y, m, d).toordinal()`` for years 1..9999."""
    y = year - (1 if month <= 2 else 0)
    era = y // 400  # floor division: no C-style adjustment for negative years
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + 719163


def civil_from_days(ordinal: int) -> tuple[int, int, int]:
    """Inverse of :func:`days_from_civil`."""
    z = ordinal - 719163 + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (1 if m <= 2 else 0), m, d)


#: The largest year an int time may name (its days still fit the stores' 32-bit day columns).
MAX_YEAR = 1_000_000
TIME_FORMS = "a TimePoint, a date, text such as 2015, 2015-03 or 2015-03-21, or an int year such as 2015"


@total_ordering
@dataclass(frozen=True, slots=True)
class TimePoint:
    """A year, a month of a year, or a day. Ordered by first day, then coarser before finer."""

    year: int
    month: int | None = None
    day: int | None = None
    # The day span (ordinals of the first and last day covered), computed once at construction: plain slots
    # because every temporal comparison reads them. Not constructor arguments, not part of eq/hash.
    first_day: int = field(init=False, repr=False, compare=False)
    last_day: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        year, month, day = self.year, self.month, self.day
        if month is None:
            if day is not None:
                raise DataError(f"a day needs a month: year={year} day={day}")
            first, last = days_from_civil(year, 1, 1), days_from_civil(year, 12, 31)
        elif not 1 <= month <= 12:
            raise DataError(f"month {month} out of range 1..12 (year {year})")
        elif day is None:
            first = days_from_civil(year, month, 1)
            last = first + days_in_month(year, month) - 1
        else:
            n_days = days_in_month(year, month)
            if not 1 <= day <= n_days:
                raise DataError(f"day {day} out of range 1..{n_days} for {year:04d}-{month:02d}")
            first = last = days_from_civil(year, month, day)
        object.__setattr__(self, "first_day", first)
        object.__setattr__(self, "last_day", last)

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def of(cls, value: TimeArg) -> TimePoint:
        """Coerce a ``TimePoint``, ``date`` (its day), ISO-ish string, or int — an int is a **year**
        (``2015`` → the year 2015), within ±:data:`MAX_YEAR`. Anything else (a float, ``None``, a bool) is a
        :class:`DataError` saying what is accepted; never an AttributeError or OverflowError."""
        if isinstance(value, TimePoint):
            return value
        if isinstance(value, date):
            return cls(value.year, value.month, value.day)
        if isinstance(value, int) and not isinstance(value, bool):
            if not -MAX_YEAR <= value <= MAX_YEAR:
                raise DataError(
                    f"year {str(value)[:30]} is out of range (at most ±{MAX_YEAR:,}); {TIME_FORMS}"
                )
            return cls(value)
        if not isinstance(value, str):
            raise DataError(f"a time must be {TIME_FORMS}; got {type(value).__name__} {str(value)[:40]!r}")
        return parse_time(value)

    @classmethod
    def from_ordinal(cls, ordinal: int) -> TimePoint:
        return cls(*civil_from_days(ordinal))

    # --- properties ---------------------------------------------------------------------------
    @property
    def granularity(self) -> Granularity:
        if self.day is not None:
            return Granularity.DAY
        if self.month is not None:
            return Granularity.MONTH
        return Granularity.YEAR

    def coarsen(self, granularity: Granularity) -> TimePoint:
        """The same time at a coarser (or equal) granularity; finer requests return ``self``."""
        if granularity >= self.granularity:
            return self
        if granularity == Granularity.YEAR:
            return TimePoint(self.year)
        return TimePoint(self.year, self.month)

    def contains(self, other: TimePoint) -> bool:
        """True if every day of ``other`` lies within ``self`` (``2015-03`` contains ``2015-03-21``)."""
        return self.first_day <= other.first_day and other.last_day <= self.last_day

    def iso(self) -> str:
        y = f"{self.year:04d}" if self.year >= 0 else f"-{-self.year:04d}"
        if self.month is None:
            return y
        if self.day is None:
            return f"{y}-{self.month:02d}"
        return f"{y}-{self.month:02d}-{self.day:02d}"

    def __str__(self) -> str:
        return self.iso()

    def __repr__(self) -> str:
        return f"TimePoint({self.iso()!r})"

    def _key(self) -> tuple[int, int]:
        return (self.first_day, int(self.granularity))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, TimePoint):
            return NotImplemented
        return self._key() < other._key()


# --- parsing (every benchmark notation; see the module docstring) ---------------------------------
#: The one month-name table: the English names, January first (``MONTH_NAMES[t.month - 1]``).
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
#: Month words (lower case: full names and the abbreviations ``jan`` … ``dec`` and ``sept``) → number.
MONTHS: dict[str, int] = {
    word: n
    for n, name in enumerate(MONTH_NAMES, 1)
    for word in (name.lower()[:3], *(("sept",) if n == 9 else ()), name.lower())
}
#: A regular expression (no capturing group) matching any month word of :data:`MONTHS`, longest first.
MONTH_PATTERN = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + ")"
OPEN_YEARS = frozenset({1, 2916})
_MONTH_RE = "(" + MONTH_PATTERN + r")\.?"
_ORD = r"(\d{1,2})(?:st|nd|rd|th)?"

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^\+?(-?\d{1,4})-(\d{1,2})-(\d{1,2})(?:[t ][\d:.]+z?)?$"), "ymd"),
    (re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2})$"), "ymd"),
    (re.compile(r"^\+?(-?\d{1,4})-(\d{1,2})$"), "ym"),
    (re.compile(r"^(-?\d{1,4})$"), "y"),
    (re.compile(rf"^{_MONTH_RE},?\s+{_ORD},?\s+(\d{{1,4}})$"), "mdy"),
    (re.compile(rf"^{_ORD}\s+(?:of\s+)?{_MONTH_RE},?\s+(\d{{1,4}})$"), "dmy"),
    (re.compile(rf"^{_MONTH_RE},?\s+(?:of\s+)?(\d{{1,4}})$"), "my"),
]
_NOISE = re.compile(r"^(?:in|on|at|of|during|the|year|month|date)\s+", re.IGNORECASE)
_RANGE = re.compile(r"^\s*(.+?)\s*(?:–|—|\bto\b|\buntil\b|\s-\s|(?<=\d{4})-(?=\d{4}$))\s*(.+?)\s*$")


def _clean(text: str) -> str:
    s = text.strip().lower().rstrip(".?!")
    previous = None
    while previous != s:
        previous = s
        s = _NOISE.sub("", s).strip()
    return re.sub(r"\s+", " ", s)


#: A time as people give it: what :meth:`TimePoint.of` reads (an int is a year, a ``date`` its day); anything
#: else is a DataError saying what is accepted.
TimeArg = TimePoint | date | str | int


def try_parse_time(text: str) -> TimePoint | None:
    """Parse ``text`` into a :class:`TimePoint`, or ``None`` if it is not a time."""
    s = _clean(text)
    for pattern, kind in _PATTERNS:
        m = pattern.match(s)
        if not m:
            continue
        g = m.groups()
        try:
            if kind == "ymd":
                return TimePoint(int(g[0]), int(g[1]), int(g[2]))
            if kind == "ym":
                return TimePoint(int(g[0]), int(g[1]))
            if kind == "y":
                return TimePoint(int(g[0]))
            if kind == "mdy":
                return TimePoint(int(g[2]), MONTHS[g[0]], int(g[1]))
            if kind == "dmy":
                return TimePoint(int(g[2]), MONTHS[g[1]], int(g[0]))
            if kind == "my":
                return TimePoint(int(g[1]), MONTHS[g[0]])
        except DataError:
            return None
    return None


def parse_time(text: str) -> TimePoint:
    """Parse ``text`` into a :class:`TimePoint`; raise :class:`DataError` saying which forms work."""
    point = try_parse_time(text)
    if point is None:
        raise DataError(
            f"cannot parse time {text!r}; use e.g. 2015, 2015-03, 2015-03-21, 'Mar 2015' or 'Jun 25th, 2006'"
        )
    return point


def parse_bound(text: str | None) -> TimePoint | None:
    """Parse one end of an interval: empty, ``None`` or an unknown-marker year (1, 2916) → ``None``."""
    if text is None:
        return None
    s = str(text).strip()
    if s in {"", "-", "None", "null", "nan", "NaN", "?", "unknown"}:
        return None
    point = parse_time(s)
    if point.year in OPEN_YEARS and point.granularity.name == "YEAR":
        return None
    if point.year in OPEN_YEARS and (point.month, point.day) in {(1, 1), (None, None)}:
        return None
    return point


def split_range(text: str) -> tuple[str, str] | None:
    """Split ``"1990-1995"`` / ``"1990 to 1995"`` into its two ends, or ``None`` if not a range."""
    s = text.strip()
    if try_parse_time(s) is not None:
        return None
    m = _RANGE.match(s)
    if not m:
        return None
    return m.group(1), m.group(2)


#: What ``as_of`` takes for "no cutoff: the whole KG" (``K_all``), besides ``None`` and the empty text.
AS_OF_ALL = "all"


def parse_as_of(value: str | int | TimePoint | None, source: str = "as_of") -> TimePoint | None:
    """The one reading of an ``as_of`` cutoff (``tkgqa eval --as-of``, ``tkgqa.ask``/``tkgqa.evaluate``'s
    ``as_of=``, the service's ``as_of`` field): ``None``, empty text or ``all`` (any case) is no cutoff — the
    whole KG (``None``); a year (int or text), a month, a date or a :class:`TimePoint` is that cutoff;
    anything else a :class:`DataError` naming ``source`` and the forms that work."""
    if value is None or isinstance(value, TimePoint):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return TimePoint(value)
    text = value.strip() if isinstance(value, str) else ""
    if isinstance(value, str) and (not text or text.lower() == AS_OF_ALL):
        return None
    point = try_parse_time(text) if text else None
    if point is None:
        raise DataError(
            f"{source} {str(value)[:60]!r} is not a time: use a year (2000), a month (2000-06), a date "
            f"(2000-06-30), or '{AS_OF_ALL}' for the whole KG"
        )
    return point
