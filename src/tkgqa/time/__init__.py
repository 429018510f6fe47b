"""Time points at a granularity, intervals, parsing and temporal relations (pure functions)."""

from .interval import (
    NEG_INF,
    POS_INF,
    AllenRelation,
    Interval,
    TimeLike,
    after,
    allen,
    before,
    distance_days,
    intersects,
    same_at,
    span_of,
    within,
)
from .parse import MONTHS, OPEN_YEARS, parse_bound, parse_time, split_range, try_parse_time
from .point import Granularity, TimePoint, civil_from_days, days_from_civil, days_in_month, is_leap

__all__ = [
    "MONTHS",
    "NEG_INF",
    "OPEN_YEARS",
    "POS_INF",
    "AllenRelation",
    "Granularity",
    "Interval",
    "TimeLike",
    "TimePoint",
    "after",
    "allen",
    "before",
    "civil_from_days",
    "days_from_civil",
    "days_in_month",
    "distance_days",
    "intersects",
    "is_leap",
    "parse_bound",
    "parse_time",
    "same_at",
    "span_of",
    "split_range",
    "try_parse_time",
    "within",
]
