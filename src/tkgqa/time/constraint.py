"""``TimeConstraint``: what a question asks of time — the one class for it, with one vocabulary.

A constraint is either a :class:`~tkgqa.time.TemporalRelation` to a stated time ``t_q`` (``before 2015``,
``in 2012-03``, ``in 1990–1995`` for "between 1990 and 1995"), or an :class:`~tkgqa.time.Extreme` with no
time (``first``, ``last``: the earliest or latest such fact). ``text`` is how the question stated the time.

Readers: φ_t reranking (:mod:`tkgqa.retrieval.temporal`, which reads ``before``/``after`` by Eq. 9 and every
other relation by its *in* rule), TimeR4's and CIK-LLM's question analysis, and the KG-supported
diagnostic (:mod:`tkgqa.eval.support`, which asks :meth:`TimeConstraint.admits`: the one time semantics,
:func:`~tkgqa.time.holds`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from .interval import Interval, Span, span_of
from .point import TimePoint
from .semantics import Extreme, TemporalRelation, holds_span

#: Every kind a constraint may have: the temporal relations, then the extremes.
CONSTRAINT_KINDS: tuple[str, ...] = (*TemporalRelation, *Extreme)


def _kind(value: object) -> TemporalRelation | Extreme:
    if isinstance(value, TemporalRelation | Extreme):
        return value
    text = str(value).strip().lower()
    for enum in (TemporalRelation, Extreme):
        if text in enum._value2member_map_:
            return enum(text)
    raise ConfigError(f"unknown time constraint {value!r}; use one of {', '.join(CONSTRAINT_KINDS)}")


@dataclass(frozen=True, slots=True)
class TimeConstraint:
    """``kind`` (a relation to ``time``, or ``first``/``last`` without one), ``time`` (``t_q``: a point or an
    interval) and ``text`` (the question's words for it, if known). A string ``kind`` is checked at
    construction: an unknown kind, a relation without a time or an extreme with one is a ConfigError."""

    kind: TemporalRelation | Extreme
    time: TimePoint | Interval | None = None
    text: str = ""

    def __post_init__(self) -> None:
        kind = _kind(self.kind)
        object.__setattr__(self, "kind", kind)
        if isinstance(kind, Extreme):
            if self.time is not None:
                hint = "after" if kind is Extreme.FIRST else "before"
                raise ConfigError(f"'{kind}' takes no time; '{kind} {hint} t' is kind='{hint}'")
        elif self.time is None:
            raise ConfigError(f"time constraint '{kind}' needs a time")

    @classmethod
    def of(cls, kind: str, time: TimePoint | Interval | str | None = None) -> TimeConstraint:
        """``TimeConstraint.of("before", "2015-03")``; strings go through :meth:`Interval.parse`."""
        if isinstance(time, str):
            parsed = Interval.parse(time)
            time = parsed.start if parsed.is_point else parsed
        return cls(_kind(kind), time)

    @classmethod
    def relative_to(
        cls, relation: TemporalRelation | str | None, time: TimePoint | Interval, text: str = ""
    ) -> TimeConstraint:
        """φ_t's constraint for a question time read with ``relation``: before/after it, else *in*."""
        match relation:
            case TemporalRelation.BEFORE:
                return cls(TemporalRelation.BEFORE, time, text)
            case TemporalRelation.AFTER:
                return cls(TemporalRelation.AFTER, time, text)
            case _:
                return cls(TemporalRelation.IN, time, text)

    @property
    def span(self) -> Span:
        """The closed day span of ``time`` (ConfigError for first/last, which have none)."""
        if self.time is None:
            raise ConfigError(f"'{self.kind}' has no time span")
        return span_of(self.time)

    def admits(self, start: TimePoint | None, end: TimePoint | None) -> bool:
        """Whether a fact spanning ``start``–``end`` stands in this relation to ``time`` (:func:`holds`, the
        one semantics). ConfigError for first/last, which compare facts with each other, not with a time."""
        if not isinstance(self.kind, TemporalRelation):
            raise ConfigError(f"'{self.kind}' compares facts with each other, not with a time")
        lo, hi = self.span
        return holds_span(self.kind, start, end, lo, hi)

    def __str__(self) -> str:
        return str(self.kind) if self.time is None else f"{self.kind} {self.time}"
