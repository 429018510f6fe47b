"""Time-aware reranking: TimeR4's time-filtering function φ_t (Eq. 9), its analogues, and μ fusion (Eq. 10).

All scores are pure functions of a question's :class:`~tkgqa.time.TimeConstraint` and fact times, computed
over closed day spans (a point covers its year/month/day, so *before 2015* means before 2015-01-01). ``d`` is
a distance in days and ``D`` the normaliser: the largest ``d`` among the candidate facts (as in Eq. 9,
"normalize the time differences within the range") or a fixed ``horizon_days``.

* **before** (Eq. 9): ``d = t_q.first_day − start.last_day`` (days from the fact's start to ``t_q``);
  ``φ_t = 1 − d / D`` if the fact is *before* ``t_q`` in the project's one time semantics
  (:mod:`tkgqa.time.semantics`: it starts before ``t_q`` begins, i.e. ``d > 0``) else ``penalty`` (−100 in
  the paper: facts on the wrong side are filtered out). The closest fact before ``t_q`` scores highest, so
  *before_last* questions need nothing more. For point events (the paper's ICEWS facts) start = end.
* **after** (mirror of Eq. 9): ``d = start.first_day − t_q.last_day``; same formula, *after* = starts after
  ``t_q`` ends. The closest fact after ``t_q`` scores highest (*after_first*).
* **proximity** (:class:`Proximity`): the ``1 − d / D`` decay says "the fact nearest ``t_q`` is the most
  relevant" — right for "who was the *last* to … before t" / "the *first* … after t", not for "who … before
  t", whose answers are every fact on that side. ``paper`` applies Eq. 9 to every before/after question;
  ``ordinal`` (the default) only to questions with a first/last word, and scores the others ``1`` on the
  right side (Eq. 9's filter without its ranking: the cosine orders them). MultiTQ coverage@15 with the
  offline rewrite: 0.600 (paper) → 0.606 (ordinal), not lower at any n on either half (odd/even quid).
* **in** (our analogue; every relation but before/after is read by this rule): ``d`` = days between the
  fact's span and ``t_q``'s span, 0 when they share a day (a day fact *in* the asked month counts as
  inside). ``φ_t = 1`` inside and decays linearly ``1 − d / D`` outside; never the penalty, so a time stated
  at the wrong granularity still ranks.
* **first** / **last** (our analogue, no question time): ``d`` = days from the earliest (first) or latest
  (last) candidate start; ``φ_t = 1 − d / D`` with ``D`` the candidates' start-day range (all equal → 1).
  Facts are ordered by start, so for intervals *last* favours the most recently begun. **Off by default**
  (:class:`~tkgqa.retrieval.Retriever` ``rerank_extremes=False``), as in the paper, which applies φ_t only
  to questions with a time ``t_q`` (§4.5): the pool is the semantic neighbourhood of the question, not the
  facts of its entities and relation, and with μ = 0.4 a φ_t spread over the pool's whole date range
  outweighs the cosine differences (~0.05–0.1 within a pool), so "When did X last visit Y?" ranked the latest
  visit *by anyone* first. On MultiTQ (350 gold questions, model2vec, scope kg) it cut first_last coverage@15
  from 0.50 to 0.29 and the overall figure from 0.520 (FKS) to 0.500.

:func:`parse_time_constraint` never returns first/last for a question that also refers to a time through
an event ("After X, who was the first to…"): *first* is relative to that reference, whose time only the
rewrite knows. Facts without a time get ``missing`` (0). With a fixed horizon ``φ_t`` is clipped at 0 beyond
it. Fusion (Eq. 10): ``φ = μ · sim + (1 − μ) · φ_t`` with ``μ = 0.4`` by default (μ hardly matters once
first/last are off: 0.2–0.8 move MultiTQ coverage@15 by ≤ 0.006).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from ..kg import Fact
from ..query.text.frame import AFTER_WORDS, BEFORE_WORDS, FIRST_WORDS, LAST_WORDS
from ..query.text.timeref import find_times
from ..query.text.words import tokenize
from ..time import NEG_INF, POS_INF, Extreme, Interval, TimePoint, span_of
from ..time.constraint import CONSTRAINT_KINDS as CONSTRAINT_KINDS  # re-exported: the one class, in time
from ..time.constraint import TimeConstraint as TimeConstraint

PAPER_PENALTY = -100.0
DEFAULT_MU = 0.4

FloatArray = npt.NDArray[np.float64]
FactTime = TimePoint | Interval | Fact | None
Num = TypeVar("Num", float, FloatArray)


def _fact_span(t: FactTime) -> tuple[int, int, int] | None:
    """(first day, last day of the start, last day) of a fact's time; ``None`` when it has none."""
    if isinstance(t, Fact):
        if t.start is None and t.end is None:
            return None
        f0, f1 = t.interval.span
        return f0, t.start.last_day if t.start is not None else NEG_INF, f1
    if t is None:
        return None
    if isinstance(t, Interval):
        f0, f1 = t.span
        return f0, t.start.last_day if t.start is not None else NEG_INF, f1
    return t.first_day, t.last_day, t.last_day


_Days = npt.NDArray[np.int64]


def _spans(times: Sequence[FactTime]) -> tuple[_Days, _Days, _Days, npt.NDArray[np.bool_]]:
    spans = [_fact_span(t) for t in times]
    has = np.array([s is not None for s in spans], dtype=bool)
    f0 = np.array([s[0] if s else 0 for s in spans], dtype=np.int64)
    s1 = np.array([s[1] if s else 0 for s in spans], dtype=np.int64)
    f1 = np.array([s[2] if s else 0 for s in spans], dtype=np.int64)
    return f0, s1, f1, has


def _distances(
    c: TimeConstraint, f0: _Days, s1: _Days, f1: _Days
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Per-fact distance ``d`` (days, before normalising) and whether the fact may satisfy ``c`` (the
    vectorised form of :func:`tkgqa.time.holds` for before/after: the fact's *start* decides)."""
    if c.kind in ("first", "last"):
        raise AssertionError("first/last use start days, not distances")
    assert c.time is not None
    q0, q1 = span_of(c.time)
    if c.kind == "before":
        d = (q0 - s1).astype(np.float64)
        ok = (d > 0) & (s1 > NEG_INF)
    elif c.kind == "after":
        d = (f0 - q1).astype(np.float64)
        ok = (d > 0) & (f0 > NEG_INF)
    else:  # in (and every other relation)
        d = np.where(f1 < q0, q0 - f1, np.where(f0 > q1, f0 - q1, 0)).astype(np.float64)
        ok = np.ones(len(d), dtype=bool)
    return d, ok


class Proximity(StrEnum):
    """Whether φ_t ranks the facts on the right side of a before/after constraint by nearness to ``t_q``."""

    PAPER = "paper"  # Eq. 9 for every before/after question: 1 − d / D, the nearest fact first
    ORDINAL = "ordinal"  # Eq. 9 for questions asking the first/last such fact; else 1 (a pure filter)

    def nearest(self, question: str) -> bool:
        """Whether ``question`` is scored by nearness (see the module docstring)."""
        if self is Proximity.PAPER:
            return True
        words = {t.text for t in tokenize(question)}
        return bool(words & (FIRST_WORDS.keys() | LAST_WORDS.keys()))


def time_scores(
    constraint: TimeConstraint | None,
    fact_times: Sequence[FactTime],
    *,
    horizon_days: float | None = None,
    penalty: float = PAPER_PENALTY,
    missing: float = 0.0,
    nearest: bool = True,
) -> FloatArray:
    """φ_t for each fact (facts, points or intervals) against ``constraint``; ``D`` from the candidates
    themselves unless ``horizon_days`` is given (see the module docstring). No constraint → all zeros.
    ``nearest=False``: before/after facts on the right side all score 1 (Eq. 9's filter, no ranking)."""
    n = len(fact_times)
    out = np.full(n, float(missing), dtype=np.float64)
    if constraint is None or n == 0:
        return np.zeros(n, dtype=np.float64) if constraint is None else out
    f0, s1, f1, has = _spans(fact_times)
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
    d, ok = _distances(constraint, f0[has], s1[has], f1[has])
    if not nearest and constraint.kind in ("before", "after"):
        out[has] = np.where(ok, 1.0, penalty)
        return out
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
    s1 = np.array([span[1]], dtype=np.int64)
    f1 = np.array([span[2]], dtype=np.int64)
    if constraint.kind in ("first", "last"):
        if reference_day is None:
            raise ConfigError(f"phi_t for '{constraint.kind}' needs reference_day (the extreme start day)")
        d = float(span[0] - reference_day if constraint.kind == "first" else reference_day - span[0])
        return float(_linear(np.array([max(d, 0.0)]), scale_days)[0])
    d_arr, ok = _distances(constraint, f0, s1, f1)
    return float(_linear(d_arr, scale_days)[0]) if ok[0] else float(penalty)


def fuse(sim: Num, time_score: Num, mu: float = DEFAULT_MU) -> Num:
    """Eq. 10: ``μ · sim + (1 − μ) · φ_t``."""
    if not 0.0 <= mu <= 1.0:
        raise ConfigError(f"mu must lie in [0, 1], got {mu}")
    return mu * sim + (1.0 - mu) * time_score  # type: ignore[no-any-return]


# --- the question's constraint, read by the one question-time reader ----------------------------------------
def parse_time_constraint(text: str) -> TimeConstraint | None:
    """The constraint a question puts on time, read by :func:`tkgqa.query.find_times` (the project's one
    question-time reader, so "until 1998" means here what it means to the symbolic parser): the first time
    mention and its cue (before → ``before``, after → ``after``, anything else → ``in``); else a
    first/last word (:data:`tkgqa.query.text.frame.FIRST_WORDS` / ``LAST_WORDS``); else ``None``.

    ``"After 2015, who was the first…"`` gives ``after 2015`` (φ_t then favours the earliest fact after
    it); ``"After the Danish ministry, who was the first…"`` gives ``None`` (first *after an event* whose time
    is unknown here)."""
    tokens = tokenize(text)
    mentions = find_times(text, tokens)
    if mentions:
        return TimeConstraint.relative_to(mentions[0].relation, mentions[0].point)
    words = {t.text for t in tokens}
    if words & (BEFORE_WORDS | AFTER_WORDS | {"same"}):
        return None  # no time mention, so the before/after/same word refers to an event
    first, last = bool(words & FIRST_WORDS.keys()), bool(words & LAST_WORDS.keys())
    if first and not last:
        return TimeConstraint(Extreme.FIRST)
    if last and not first:
        return TimeConstraint(Extreme.LAST)
    return None
