"""Time-aware reranking: TimeR4's time-filtering function φ_t (Eq. 9), its analogues, and μ fusion (Eq. 10).

All scores are pure functions of a question's :class:`TimeConstraint` and fact times, computed over closed
day spans (a point covers its year/month/day, so *before 2015* means before 2015-01-01). ``d`` is a distance
in days and ``D`` the normaliser: the largest ``d`` among the candidate facts (as in Eq. 9, "normalize the
time differences within the range") or a fixed ``horizon_days``.

* **before** (Eq. 9): ``d = t_q.first_day − fact.last_day``; ``φ_t = 1 − d / D`` if ``d > 0`` else ``penalty``
  (−100 in the paper: facts on the wrong side are filtered out). The closest fact before ``t_q`` scores
  highest, so *before_last* questions need nothing more.
* **after** (mirror of Eq. 9): ``d = fact.first_day − t_q.last_day``; same formula. The closest fact after
  ``t_q`` scores highest (*after_first*).
* **equal** / **in** (our analogue, one rule): ``d`` = days between the fact's span and ``t_q``'s span, 0
  when they share a day (a day fact *in* the asked month counts as inside). ``φ_t = 1`` inside and decays
  linearly ``1 − d / D`` outside; never the penalty, so a time stated at the wrong granularity still ranks.
* **first** / **last** (our analogue, no question time): ``d`` = days from the earliest (first) or latest
  (last) candidate start; ``φ_t = 1 − d / D`` with ``D`` the candidates' start-day range (all equal → 1).
  Facts are ordered by start, so for intervals *last* favours the most recently begun.

Facts without a time get ``missing`` (0). With a fixed horizon ``φ_t`` is clipped at 0 beyond it.
Fusion (Eq. 10): ``φ = μ · sim + (1 − μ) · φ_t`` with ``μ = 0.4`` by default.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar, get_args

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from ..kg import Fact
from ..time import NEG_INF, POS_INF, Interval, TimePoint, span_of, try_parse_time

ConstraintKind = Literal["before", "after", "equal", "in", "first", "last"]
CONSTRAINT_KINDS: tuple[str, ...] = get_args(ConstraintKind)
PAPER_PENALTY = -100.0
DEFAULT_MU = 0.4

FloatArray = npt.NDArray[np.float64]
FactTime = TimePoint | Interval | Fact | None
Num = TypeVar("Num", float, FloatArray)


@dataclass(frozen=True, slots=True)
class TimeConstraint:
    """What a question asks of time: ``before 2015``, ``in 2012-03``, ``first`` … (``time`` is ``t_q``)."""

    kind: ConstraintKind
    time: TimePoint | Interval | None = None

    def __post_init__(self) -> None:
        if self.kind not in CONSTRAINT_KINDS:
            raise ConfigError(
                f"unknown time constraint {self.kind!r}; use one of {', '.join(CONSTRAINT_KINDS)}"
            )
        if self.kind in ("first", "last"):
            if self.time is not None:
                hint = "after" if self.kind == "first" else "before"
                raise ConfigError(f"'{self.kind}' takes no time; '{self.kind} {hint} t' is kind='{hint}'")
        elif self.time is None:
            raise ConfigError(f"time constraint '{self.kind}' needs a time")

    @classmethod
    def of(cls, kind: str, time: TimePoint | Interval | str | None = None) -> TimeConstraint:
        """``TimeConstraint.of("before", "2015-03")``; strings go through :meth:`Interval.parse`."""
        if isinstance(time, str):
            parsed = Interval.parse(time)
            time = parsed.start if parsed.is_point else parsed
        return cls(kind.lower(), time)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return self.kind if self.time is None else f"{self.kind} {self.time}"


def _fact_span(t: FactTime) -> tuple[int, int] | None:
    if isinstance(t, Fact):
        if t.start is None and t.end is None:
            return None
        return t.interval.span
    if t is None:
        return None
    return span_of(t)


def _spans(
    times: Sequence[FactTime],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    spans = [_fact_span(t) for t in times]
    has = np.array([s is not None for s in spans], dtype=bool)
    f0 = np.array([s[0] if s else 0 for s in spans], dtype=np.int64)
    f1 = np.array([s[1] if s else 0 for s in spans], dtype=np.int64)
    return f0, f1, has


def _distances(
    c: TimeConstraint, f0: npt.NDArray[np.int64], f1: npt.NDArray[np.int64]
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Per-fact distance ``d`` (days, before normalising) and whether the fact may satisfy ``c``."""
    if c.kind in ("first", "last"):
        raise AssertionError("first/last use start days, not distances")
    assert c.time is not None
    q0, q1 = span_of(c.time)
    if c.kind == "before":
        d = (q0 - f1).astype(np.float64)
        ok = (d > 0) & (f1 < POS_INF)
    elif c.kind == "after":
        d = (f0 - q1).astype(np.float64)
        ok = (d > 0) & (f0 > NEG_INF)
    else:  # equal / in
        d = np.where(f1 < q0, q0 - f1, np.where(f0 > q1, f0 - q1, 0)).astype(np.float64)
        ok = np.ones(len(d), dtype=bool)
    return d, ok


def time_scores(
    constraint: TimeConstraint | None,
    fact_times: Sequence[FactTime],
    *,
    horizon_days: float | None = None,
    penalty: float = PAPER_PENALTY,
    missing: float = 0.0,
) -> FloatArray:
    """φ_t for each fact (facts, points or intervals) against ``constraint``; ``D`` from the candidates
    themselves unless ``horizon_days`` is given (see the module docstring). No constraint → all zeros."""
    n = len(fact_times)
    out = np.full(n, float(missing), dtype=np.float64)
    if constraint is None or n == 0:
        return np.zeros(n, dtype=np.float64) if constraint is None else out
    f0, f1, has = _spans(fact_times)
    if not has.any():
        return out
    if constraint.kind in ("first", "last"):
        starts = f0[has].astype(np.float64)
        finite = starts[(starts > NEG_INF) & (starts < POS_INF)]
        lo = float(finite.min()) if len(finite) else 0.0
        hi = float(finite.max()) if len(finite) else 0.0
        starts = np.clip(starts, lo, hi)  # an open start counts as the earliest
        d = starts - lo if constraint.kind == "first" else hi - starts
        scale = float(horizon_days) if horizon_days else hi - lo
        out[has] = _linear(d, scale)
        return out
    d, ok = _distances(constraint, f0[has], f1[has])
    scale = float(horizon_days) if horizon_days else (float(d[ok].max()) if ok.any() else 0.0)
    out[has] = np.where(ok, _linear(d, scale), penalty)
    return out


def _linear(d: FloatArray, scale: float) -> FloatArray:
    """``1 − d / scale`` clipped to [0, 1]; a zero scale means every candidate is at distance 0 → 1."""
    if scale <= 0:
        return np.where(d <= 0, 1.0, 0.0)
    return np.clip(1.0 - d / scale, 0.0, 1.0)


def phi_t(
    constraint: TimeConstraint,
    fact_time: FactTime,
    *,
    scale_days: float,
    reference_day: int | None = None,
    penalty: float = PAPER_PENALTY,
    missing: float = 0.0,
) -> float:
    """φ_t of one fact with an explicit normaliser ``D = scale_days``.

    For before/after this is exactly Eq. 9 with ``max(t_q − t) = scale_days``. For first/last
    ``reference_day`` is the earliest (first) or latest (last) candidate start day."""
    span = _fact_span(fact_time)
    if span is None:
        return float(missing)
    f0 = np.array([span[0]], dtype=np.int64)
    f1 = np.array([span[1]], dtype=np.int64)
    if constraint.kind in ("first", "last"):
        if reference_day is None:
            raise ConfigError(f"phi_t for '{constraint.kind}' needs reference_day (the extreme start day)")
        d = float(span[0] - reference_day if constraint.kind == "first" else reference_day - span[0])
        return float(_linear(np.array([max(d, 0.0)]), scale_days)[0])
    d_arr, ok = _distances(constraint, f0, f1)
    return float(_linear(d_arr, scale_days)[0]) if ok[0] else float(penalty)


def fuse(sim: Num, time_score: Num, mu: float = DEFAULT_MU) -> Num:
    """Eq. 10: ``μ · sim + (1 − μ) · φ_t``."""
    if not 0.0 <= mu <= 1.0:
        raise ConfigError(f"mu must lie in [0, 1], got {mu}")
    return mu * sim + (1.0 - mu) * time_score  # type: ignore[no-any-return]


# --- a light reader of constraints from question text ------------------------------------------------
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_TIME_RE = re.compile(
    rf"\b(\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{4}}-\d{{1,2}}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+\d{{4}}|{_MONTH},?\s+(?:of\s+)?\d{{4}}|\d{{4}})\b",
    re.IGNORECASE,
)
_BEFORE = re.compile(r"\b(?:before|prior to|until|till|earlier than|up to)\s*$", re.IGNORECASE)
_AFTER = re.compile(r"\b(?:after|since|following|later than|from)\s*$", re.IGNORECASE)
_FIRST = re.compile(r"\b(?:first|earliest|initially)\b", re.IGNORECASE)
_LAST = re.compile(r"\b(?:last|latest|most recent(?:ly)?|final)\b", re.IGNORECASE)


def parse_time_constraint(text: str) -> TimeConstraint | None:
    """Best-effort constraint from a question: the first time expression and the word before it
    (``before``/``after`` …, otherwise *in*), else ``first``/``last`` keywords, else ``None``.

    ``"After 2015, who was the first…"`` gives ``after 2015`` (φ_t then favours the earliest fact
    after it)."""
    for m in _TIME_RE.finditer(text):
        point = try_parse_time(m.group(1))
        if point is None:
            continue
        head = text[: m.start()]
        if _BEFORE.search(head):
            return TimeConstraint("before", point)
        if _AFTER.search(head):
            return TimeConstraint("after", point)
        return TimeConstraint("equal", point)
    first, last = _FIRST.search(text), _LAST.search(text)
    if first and not last:
        return TimeConstraint("first")
    if last and not first:
        return TimeConstraint("last")
    return None
