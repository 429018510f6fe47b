"""Time mentions in questions: "in April 2005", "on 19 November 2015", "In 2005-01", "before 2008"…

The project's one question-time reader: :func:`find_times` returns the mentions with their token span, the
parsed :class:`TimePoint` and the :class:`~tkgqa.time.TemporalRelation` its cue word asks for
(:data:`TIME_CUES`: ``in``/``on``/``during`` → in, ``before``/``prior to`` → before, ``after`` → after,
``since`` → since; "start(ed) in" → starts, "end(ed) in" → ends; ``None`` for a bare time).
"until 1998" and "from 1990" are read as *in*: at the year granularity of such
questions the fact that ends in 1998 (or starts in 1990) shares that year, which *in* keeps while
*before*/*after* would drop it. Every consumer (the symbolic parser, ARI's linker, TimeR4's rewrite and
φ_t constraint, the KG-supported diagnostic) reads times here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...time import MONTH_PATTERN, Granularity, TemporalRelation, TimePoint, try_parse_time
from .words import Token

_MONTH = MONTH_PATTERN + r"\.?"
_DAY = r"(?:[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:1\d{3}|20\d{2})"
_TIME = re.compile(
    "|".join(
        [
            rf"(?P<yzero>{_YEAR}-0-0)",
            rf"(?P<iso>{_YEAR}-[01]?\d-[0-3]?\d|{_YEAR}/[01]?\d/[0-3]?\d)",
            rf"(?P<mdy_num>[01]?\d-[0-3]?\d-{_YEAR})",
            rf"(?P<ym>{_YEAR}-[01]?\d)(?![\d-])",
            rf"(?P<dmy>{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR})",
            rf"(?P<mdy>{_MONTH}\s+{_DAY},?\s+{_YEAR})",
            rf"(?P<my>{_MONTH},?\s+(?:of\s+)?{_YEAR})",
            rf"(?P<y>{_YEAR})(?![\d-])",
        ]
    ),
    re.IGNORECASE,
)
_IN, _BEFORE, _AFTER = TemporalRelation.IN, TemporalRelation.BEFORE, TemporalRelation.AFTER
#: The cue word in front of a time and the relation it asks for (the one table of question-time cues).
TIME_CUES: dict[str, TemporalRelation] = {
    "in": _IN, "on": _IN, "during": _IN, "at": _IN, "within": _IN, "throughout": _IN, "from": _IN,
    "until": _IN, "till": _IN, "as": _IN,
    "before": _BEFORE, "prior": _BEFORE, "earlier": _BEFORE, "ahead": _BEFORE,
    "after": _AFTER, "following": _AFTER, "later": _AFTER, "since": TemporalRelation.SINCE,
}  # fmt: skip
_PREPS = TIME_CUES
_FILLER = frozenset(
    {"the", "year", "month", "day", "date", "of", "his", "her", "their", "its", "this", "that"}
)
_START_VERBS = frozenset({"start", "started", "starts", "starting", "begin", "began", "begins", "beginning"})
_END_VERBS = frozenset({"end", "ended", "ends", "ending", "until", "till"})
_EDGE = {
    "start": TemporalRelation.STARTS, "end": TemporalRelation.ENDS, "in": _IN, "point": _IN,
}  # fmt: skip  # "end time is 1651" (templated)


@dataclass(frozen=True, slots=True)
class TimeMention:
    """A time in the question: token span ``[start, end)``, the time and its preposition class."""

    start: int
    end: int
    point: TimePoint
    relation: TemporalRelation | None  # None: a bare time with no cue word
    text: str


def _parse(kind: str, text: str) -> TimePoint | None:
    if kind == "yzero":
        return TimePoint(int(text[:4]))
    if kind == "mdy_num":
        m, d, y = (int(x) for x in text.split("-"))
        try:
            return TimePoint(y, m, d)
        except Exception:
            return None
    cleaned = re.sub(r"\s+of\s+", " ", text)
    return try_parse_time(cleaned)


def find_times(text: str, tokens: list[Token]) -> list[TimeMention]:
    """Time mentions in ``text`` (whose tokens are ``tokens``), left to right."""
    out: list[TimeMention] = []
    for m in _TIME.finditer(text):
        kind = m.lastgroup or "y"
        point = _parse(kind, m.group(0))
        if point is None:
            continue
        lo, hi = m.start(), m.end()
        if kind == "y" and _looks_like_number(text, lo, hi):
            continue
        span = [i for i, t in enumerate(tokens) if lo <= t.start < hi]
        if not span:
            continue
        start, end = span[0], span[-1] + 1
        relation: TemporalRelation | None = None
        j = start - 1
        while j >= 0 and tokens[j].text in _FILLER:
            j -= 1
        if j >= 0 and tokens[j].text in _PREPS:
            relation, start = _PREPS[tokens[j].text], j
        elif j >= 1 and tokens[j].text in {"to", "than"} and tokens[j - 1].text in _PREPS:
            relation, start = _PREPS[tokens[j - 1].text], j - 1  # "prior to", "earlier/later than"
        elif (
            j >= 2 and tokens[j].text == "is" and tokens[j - 1].text == "time" and tokens[j - 2].text in _EDGE
        ):
            relation = _EDGE[tokens[j - 2].text]
        for k in range(max(0, start - 2), start):
            word = tokens[k].text
            if word in _START_VERBS:
                relation = TemporalRelation.STARTS
            elif word in _END_VERBS:
                relation = TemporalRelation.ENDS
        out.append(TimeMention(start, end, point, relation, m.group(0)))
    return out


def _looks_like_number(text: str, lo: int, hi: int) -> bool:
    """A bare 4-digit number that is part of a bigger number or a name (``1,500``, ``Apollo 1100``)."""
    before = text[max(0, lo - 1) : lo]
    after = text[hi : hi + 1]
    return before in {",", ".", "$"} or (after in {",", "."} and text[hi + 1 : hi + 2].isdigit())


GRANULARITY_WORDS = {
    "year": Granularity.YEAR, "years": Granularity.YEAR, "month": Granularity.MONTH,
    "months": Granularity.MONTH, "day": Granularity.DAY, "date": Granularity.DAY, "days": Granularity.DAY,
    "season": Granularity.YEAR,
}  # fmt: skip
