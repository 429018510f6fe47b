"""The sorted indexes of the in-memory store (:class:`~tkgqa.kg.TemporalKG`).

Facts live in dictionary-encoded numpy columns (``s r o t0 t1 g0 g1``: subject, relation and object ids,
first and last day, start and end granularity, 0 for an open end). Each index kind (``s``, ``o``, ``r``,
``sr``, ``ro``, ``sro``, ``t``) is the fact ids sorted by (integer key, first day); the dense kinds, keyed by
a bare entity or relation id, also keep an offsets table so a key's run is found without a search.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
INDEX_KINDS = ("s", "o", "r", "sr", "ro", "sro", "t")
COLUMNS = ("s", "r", "o", "t0", "t1", "g0", "g1")
DENSE_KINDS = ("s", "o", "r")  # keys are entity/relation ids: offsets table instead of binary search
R_BITS, E_BITS = 18, 22
MAX_ENTITIES, MAX_RELATIONS = 1 << E_BITS, 1 << R_BITS
KnownOrder = IntArray | tuple[IntArray, IntArray, IntArray]


def index_key(kind: str, s: Any, r: Any, o: Any) -> Any:
    """Integer key of an index; works on ints and on int64 arrays."""
    if kind == "s":
        return s
    if kind == "o":
        return o
    if kind == "r":
        return r
    if kind == "sr":
        return (s << R_BITS) | r
    if kind == "ro":
        return (r << E_BITS) | o
    if kind == "sro":
        return (((s << R_BITS) | r) << E_BITS) | o
    return 0  # "t": one key, everything sorted by time


@dataclass(frozen=True)
class Index:
    keys: IntArray  # sorted
    ids: IntArray  # fact ids in (key, first day) order
    t0: IntArray  # first day of each fact in ``ids`` order
    offsets: list[int] | None = None  # dense kinds: ids[offsets[k]:offsets[k + 1]] are the facts of key k
    offsets_array: IntArray | None = None  # the same offsets as an array (vectorised gathers)


def sorted_index(
    kind: str, cols: Mapping[str, IntArray], known: KnownOrder | None
) -> tuple[IntArray, IntArray, IntArray]:
    """``(sorted keys, order, sorted starts)`` of index ``kind``: taken as given when ``known`` is a whole
    triple of the right length, gathered along a known order, or sorted from scratch."""
    s, r, o, t0 = (cols[c] for c in ("s", "r", "o", "t0"))
    n = len(s)
    if isinstance(known, tuple):
        if all(len(a) == n for a in known):
            return known
        known = known[1]
    if known is None or len(known) != n:
        keys = np.zeros(n, dtype=np.int64) if kind == "t" else index_key(kind, s, r, o)
        order = np.lexsort((t0, keys)).astype(np.int64)
        return np.ascontiguousarray(keys[order]), order, np.ascontiguousarray(t0[order])
    order = known
    if kind == "t":
        return np.zeros(n, dtype=np.int64), order, np.ascontiguousarray(t0[order])
    return index_key(kind, s[order], r[order], o[order]), order, np.ascontiguousarray(t0[order])


def build_indexes(
    cols: Mapping[str, IntArray], n_entities: int, n_relations: int, orders: Mapping[str, KnownOrder] | None
) -> dict[str, Index]:
    """Every index kind over ``cols``; ``orders`` gives known sort orders (from the cache) to skip sorting,
    or whole ``(sorted keys, order, sorted starts)`` triples to skip the gathers too."""
    out = {}
    for kind in INDEX_KINDS:
        sorted_keys, order, starts = sorted_index(kind, cols, (orders or {}).get(kind))
        offsets = None
        if kind in DENSE_KINDS:
            size = n_relations if kind == "r" else n_entities
            offsets = sorted_keys.searchsorted(np.arange(size + 1, dtype=np.int64))
        out[kind] = Index(sorted_keys, order, starts, None if offsets is None else offsets.tolist(), offsets)
    return out


DeltaRow = tuple[int, int, int, int, int, int, int]


def _delta_index() -> dict[str, dict[int, list[int]]]:
    return {k: defaultdict(list) for k in INDEX_KINDS}


@dataclass(slots=True)
class State:
    """What a :class:`~tkgqa.kg.memory.TemporalKG` query reads: the columns and indexes of the compacted
    part, and the delta appended since (swapped whole by compaction, the delta appended to in place by the
    one writer; see that module's docstring)."""

    cols: dict[str, IntArray]
    index: dict[str, Index]
    n_main: int = 0
    max_dur: int = 0  # largest ``t1 - t0`` of the main part: bounds the time-window search
    ordered: bool = True  # False if some fact ends before it starts
    delta: list[DeltaRow] = field(default_factory=list)
    delta_index: dict[str, dict[int, list[int]]] = field(default_factory=_delta_index)


def empty_state() -> State:
    return State({c: np.zeros(0, dtype=np.int64) for c in COLUMNS}, {})
