"""Temporal KG: facts, the store protocol, the in-memory store and the ARI operators."""

from .base import KGStore, TimeQuery
from .fact import Fact, display_name
from .memory import KGSnapshot, TemporalKG
from .operators import (
    OPERATORS,
    get_after,
    get_before,
    get_between,
    get_during,
    get_first,
    get_head_entity,
    get_last,
    get_tail_entity,
    get_time,
    other_entity,
)

__all__ = [
    "OPERATORS",
    "Fact",
    "KGSnapshot",
    "KGStore",
    "TemporalKG",
    "TimeQuery",
    "display_name",
    "get_after",
    "get_before",
    "get_between",
    "get_during",
    "get_first",
    "get_head_entity",
    "get_last",
    "get_tail_entity",
    "get_time",
    "other_entity",
]
