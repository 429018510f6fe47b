"""Turn facts into short sentences for embedding and lexical search (TimeR4 Eq. 1's ``S(s, p, o, t)``).

One configurable :class:`Verbalizer`: ``Barack Obama Make a visit China on 2014-05-03`` for point events,
``Albert Einstein educated at ETH Zurich from 1896 to 1900`` for intervals, ``since``/``until`` for open
ends. Names go through ``kg.label`` when a store is given (labels table, else ``_`` → space) and
``_`` → space otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from ..kg import Fact, KGStore
from ..time import MONTH_NAMES, TimePoint

TimeStyle = Literal["iso", "words"]


def format_time(t: TimePoint, style: TimeStyle = "iso") -> str:
    """``2014-05-03`` (iso) or ``3 May 2014`` (words), at the point's own granularity."""
    if style == "iso" or t.month is None:
        return t.iso()
    month = MONTH_NAMES[t.month - 1]
    year = t.iso().split("-")[0] if t.year >= 0 else t.iso()[:5]
    return f"{month} {year}" if t.day is None else f"{t.day} {month} {year}"


@dataclass(frozen=True, slots=True)
class Verbalizer:
    """Fact → sentence. Templates see ``{s} {r} {o}`` and ``{t}`` (point) or ``{start} {end}``."""

    point_template: str = "{s} {r} {o} on {t}"
    interval_template: str = "{s} {r} {o} from {start} to {end}"
    open_end_template: str = "{s} {r} {o} since {start}"
    open_start_template: str = "{s} {r} {o} until {end}"
    timeless_template: str = "{s} {r} {o}"
    time_style: TimeStyle = "iso"
    include_time: bool = True
    underscores_to_spaces: bool = True

    def name(self, raw: str, kg: KGStore | None) -> str:
        text = kg.label(raw) if kg is not None else raw
        return text.replace("_", " ").strip() if self.underscores_to_spaces else text

    def __call__(self, fact: Fact, kg: KGStore | None = None) -> str:
        return self.render(fact, lambda raw: self.name(raw, kg))

    def render(self, fact: Fact, name: Callable[[str], str]) -> str:
        s, r, o = name(fact.subject), name(fact.relation), name(fact.object)
        start, end = fact.start, fact.end
        if not self.include_time or (start is None and end is None):
            return self.timeless_template.format(s=s, r=r, o=o)
        if start is not None and (end is None or end == start):
            if end is None:
                return self.open_end_template.format(s=s, r=r, o=o, start=format_time(start, self.time_style))
            return self.point_template.format(s=s, r=r, o=o, t=format_time(start, self.time_style))
        assert end is not None
        if start is None:
            return self.open_start_template.format(s=s, r=r, o=o, end=format_time(end, self.time_style))
        return self.interval_template.format(
            s=s, r=r, o=o, start=format_time(start, self.time_style), end=format_time(end, self.time_style)
        )

    def many(self, facts: Iterable[Fact], kg: KGStore | None = None) -> list[str]:
        """Verbalize many facts, looking each name up once."""
        memo: dict[str, str] = {}

        def name(raw: str) -> str:
            found = memo.get(raw)
            if found is None:
                found = memo[raw] = self.name(raw, kg)
            return found

        return [self.render(f, name) for f in facts]


DEFAULT_VERBALIZER = Verbalizer()


def verbalize_fact(
    fact: Fact, kg: KGStore | None = None, *, verbalizer: Verbalizer = DEFAULT_VERBALIZER
) -> str:
    """``"S rel O on 2014-05-03"`` / ``"S rel O from 1990 to 1995"`` (see :class:`Verbalizer`)."""
    return verbalizer(fact, kg)


def verbalize_facts(
    facts: Iterable[Fact], kg: KGStore | None = None, *, verbalizer: Verbalizer = DEFAULT_VERBALIZER
) -> list[str]:
    return verbalizer.many(facts, kg)
