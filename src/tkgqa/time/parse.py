"""Parse every time notation the benchmarks use into :class:`TimePoint` / :class:`Interval`.

Accepted (case-insensitive, surrounding words like "in"/"on" ignored): ``2015``, ``2015-03``,
``2015-03-21``, ``2015/03/21``, ISO timestamps ``1994-03-01T00:00:00Z`` (Wikidata's ``+`` prefix too),
``Mar 2015``, ``March, 2015``, ``In Dec, 2008``, ``Jun 25th, 2006``, ``June 25, 2006``, ``25 June 2006``,
``25th of June 2006``, and year intervals ``1990-1995`` / ``1990–1995`` / ``1990 to 1995``.
Years 1 and 2916 are the "unknown" markers of the TimeQuestions/CronQuestions data: :func:`parse_bound`
maps them to ``None`` (open end).
"""

from __future__ import annotations

import re

from ..errors import DataError
from .point import TimePoint

MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
    "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9,
    "september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}  # fmt: skip
OPEN_YEARS = frozenset({1, 2916})
_MONTH_RE = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
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
