"""Temporal KG: facts, the store protocol, the in-memory store and the ARI operators."""

from . import duckdb_io  # noqa: F401  registers the duckdb and parquet KG formats (duckdb imported lazily)
from .base import Hop, KGStore, TimeQuery
from .fact import Fact, display_name
from .linking import Candidate, EntityLinker, RelationLinker
from .loaders import LoadReport, load_demo_kg, load_kg
from .memory import KGSnapshot, TemporalKG
from .neighborhood import EntityLifetime, entity_lifetime, neighbors, relations_by_hop, subgraph
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
    "Candidate",
    "EntityLifetime",
    "EntityLinker",
    "Fact",
    "Hop",
    "KGSnapshot",
    "KGStore",
    "LoadReport",
    "RelationLinker",
    "TemporalKG",
    "TimeQuery",
    "display_name",
    "entity_lifetime",
    "get_after",
    "get_before",
    "get_between",
    "get_during",
    "get_first",
    "get_head_entity",
    "get_last",
    "get_tail_entity",
    "get_time",
    "load_demo_kg",
    "load_kg",
    "neighbors",
    "other_entity",
    "relations_by_hop",
    "subgraph",
]
