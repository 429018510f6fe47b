"""The compact columnar core every built-in store reads through (issue #31).

Facts live in dictionary-encoded columns (``s r o t0 t1 g0 g1``: subject, relation and object ids (int32),
first and last day (int32), start and end granularity (int8, 0 for an open end)). Four permutations of the
fact ids (int32) answer every lookup with binary searches and slices:

* ``sr``: by (subject, relation, first day, id), with the relation and first day of each entry alongside and
  CSR offsets per subject (``sr_off``): ``facts(subject, relation)`` is an offset lookup, a binary search for
  the relation inside the subject's run, then one for the time window; ``facts(subject)`` sorts the run;
* ``or``: the same by object (``incident``, ``facts(object=…)``, ``facts(relation=…, object=…)``);
* ``r``: by (relation, first day, id) with offsets per relation;
* ``t``: by (first day, id) (time-only queries, ``as_of`` iteration).

That is 22 bytes of columns and 40 of permutations, 62 bytes per fact. The arrays are plain numpy arrays,
so they may be memory-mapped ``.npy`` files (:mod:`tkgqa.kg.core_files`): a cached store opens without
reading them and processes share the pages. Results come in (first day, id) order: start order, ties in
insertion order, the rule of :mod:`tkgqa.kg.base`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..time import NEG_INF, POS_INF

IntArray = npt.NDArray[np.int64]
AnyArray = npt.NDArray[Any]
INDEX_KINDS = ("s", "o", "r", "sr", "ro", "sro", "t")  # query shapes (and the keys of the append delta)
COLUMNS = ("s", "r", "o", "t0", "t1", "g0", "g1")
NARROW: dict[str, type[np.generic]] = {
    "s": np.int32,
    "r": np.int32,
    "o": np.int32,
    "t0": np.int32,
    "t1": np.int32,
    "g0": np.int8,
    "g1": np.int8,
}
#: the arrays of a core besides the columns (``col_<c>``): permutations, their sorted keys and offsets
PERM_ARRAYS: tuple[str, ...] = (
    *("sr_ids", "sr_r", "sr_t0", "sr_off", "or_ids", "or_r", "or_t0", "or_off"),
    *("r_ids", "r_t0", "r_off", "t_ids", "t_t0"),
)
CORE_ARRAYS = tuple(f"col_{c}" for c in COLUMNS) + PERM_ARRAYS
R_BITS, E_BITS = 18, 22
MAX_ENTITIES, MAX_RELATIONS = 1 << E_BITS, 1 << R_BITS
_EMPTY = np.zeros(0, dtype=np.int64)


def index_key(kind: str, s: Any, r: Any, o: Any) -> Any:
    """Integer key of a query shape (used by the append delta); works on ints and on int64 arrays."""
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


def _offsets(keys: AnyArray, size: int) -> IntArray:
    counts = np.bincount(keys, minlength=size) if len(keys) else np.zeros(size, dtype=np.int64)
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _then_by(order: IntArray, key: AnyArray) -> IntArray:
    """``order`` re-sorted stably by ``key`` (so equal keys keep ``order``'s order)."""
    return order[np.argsort(key[order], kind="stable")]


def build_core(
    cols: Mapping[str, AnyArray],
    n_entities: int,
    n_relations: int,
    known: Mapping[str, AnyArray] | None = None,
) -> dict[str, AnyArray]:
    """The core arrays of ``cols``: narrowed columns and the four permutations. Arrays of ``known`` (e.g.
    memory-mapped from a cache) of the right length are taken as they are; the rest are built by sorting."""
    known = dict(known or {})
    out: dict[str, AnyArray] = {}
    for c in COLUMNS:
        out[f"col_{c}"] = np.ascontiguousarray(cols[c], dtype=NARROW[c])
    n = len(out["col_s"])
    if all(k in known and (k.endswith("_off") or len(known[k]) == n) for k in PERM_ARRAYS):
        out.update({k: known[k] for k in PERM_ARRAYS})  # offsets may be shorter than a grown vocabulary
        return out
    n_entities = max(n_entities, int(out["col_s"].max(initial=-1)) + 1, int(out["col_o"].max(initial=-1)) + 1)
    n_relations = max(n_relations, int(out["col_r"].max(initial=-1)) + 1)
    s, r, o, t0 = (out[f"col_{c}"] for c in ("s", "r", "o", "t0"))
    by_t = np.argsort(t0, kind="stable").astype(np.int64)  # ties by id
    pair = (s.astype(np.int64) << R_BITS) | r
    sr = _then_by(by_t, pair)
    orr = _then_by(by_t, (o.astype(np.int64) << R_BITS) | r)
    by_r = _then_by(by_t, r)
    for name, order, key, off_size in (("sr", sr, s, n_entities), ("or", orr, o, n_entities)):
        out[f"{name}_ids"] = order.astype(np.int32)
        out[f"{name}_r"] = r[order]
        out[f"{name}_t0"] = t0[order]
        out[f"{name}_off"] = _offsets(key, off_size)
    out["r_ids"], out["r_t0"], out["r_off"] = by_r.astype(np.int32), t0[by_r], _offsets(r, n_relations)
    out["t_ids"], out["t_t0"] = by_t.astype(np.int32), t0[by_t]
    return out


def _run(off: AnyArray, key: int) -> tuple[int, int]:
    if key + 1 >= len(off):
        return (0, 0)
    return int(off[key]), int(off[key + 1])


@dataclass(slots=True)
class State:
    """What a :class:`~tkgqa.kg.memory.TemporalKG` query reads: the core arrays of the compacted part, and
    the delta appended since (swapped whole by compaction, the delta appended to in place by the one
    writer; see that module's docstring). ``dead``: sorted ids of facts withdrawn since (the DuckDB store's
    retractions), left out of every answer."""

    core: dict[str, AnyArray]
    n_main: int = 0
    max_dur: int = 0  # largest ``t1 - t0`` of the main part: bounds the time-window search
    ordered: bool = True  # False if some fact ends before it starts
    delta: list[tuple[int, ...]] = field(default_factory=list)
    delta_index: dict[str, dict[int, list[int]]] = field(default_factory=lambda: _delta_index())
    dead: IntArray = field(default_factory=lambda: _EMPTY)
    cols: dict[str, AnyArray] = field(init=False)

    def __post_init__(self) -> None:
        self.cols = {c: self.core[f"col_{c}"] for c in COLUMNS}

    # --- searches of the main part -------------------------------------------------------------------------
    def window(self, ids: AnyArray, t0: AnyArray, lo_t: int, hi_t: int) -> IntArray:
        """Of a run of ``ids`` sorted by first day (``t0``), those whose span meets ``[lo_t, hi_t]``."""
        lo, hi = 0, len(ids)
        if not hi or (hi_t >= POS_INF and lo_t <= NEG_INF):
            return np.asarray(ids, dtype=np.int64)
        if hi_t < POS_INF:
            hi = int(t0.searchsorted(hi_t, "right"))  # starts no later than the window's end
        if lo_t <= NEG_INF or lo >= hi:
            return np.asarray(ids[lo:hi], dtype=np.int64)
        sure = min(hi, int(t0.searchsorted(lo_t))) if self.ordered else hi  # these start in the window
        maybe = 0 if lo_t - self.max_dur <= NEG_INF else int(t0.searchsorted(lo_t - self.max_dur))
        if maybe >= sure:
            return np.asarray(ids[sure:hi], dtype=np.int64)
        early = np.asarray(ids[maybe:sure], dtype=np.int64)
        early = early[self.cols["t1"][early] >= lo_t]  # started earlier, still running at the window
        rest = np.asarray(ids[sure:hi], dtype=np.int64)
        return np.concatenate([early, rest]) if len(early) else rest

    def unsorted_window(self, ids: AnyArray, t0: AnyArray, lo_t: int, hi_t: int) -> IntArray:
        """Of a run not sorted by time, those meeting ``[lo_t, hi_t]``, put in (first day, id) order."""
        ids = np.asarray(ids, dtype=np.int64)
        if hi_t < POS_INF or lo_t > NEG_INF:
            keep = np.asarray(t0 <= hi_t)
            if lo_t > NEG_INF:
                keep &= self.cols["t1"][ids] >= lo_t
            ids, t0 = ids[keep], t0[keep]
        if len(ids) < 2:
            return ids
        return ids[np.lexsort((ids, t0))]

    def main_ids(self, s: int, r: int, o: int, lo_t: int, hi_t: int) -> IntArray:
        """Ids of the main part matching the pattern (``-1`` = any) and meeting the day window, in
        (first day, id) order: binary searches and slices of the permutations."""
        c = self.core
        if s >= 0 or o >= 0:
            side, key, other = ("sr", s, o) if s >= 0 else ("or", o, -1)
            lo, hi = _run(c[f"{side}_off"], key)
            if lo >= hi:
                return _EMPTY
            if r >= 0:
                rs = c[f"{side}_r"][lo:hi]
                lo, hi = lo + int(rs.searchsorted(r)), lo + int(rs.searchsorted(r, "right"))
                ids = self.window(c[f"{side}_ids"][lo:hi], c[f"{side}_t0"][lo:hi], lo_t, hi_t)
            else:
                ids = c[f"{side}_ids"][lo:hi]
                t0 = c[f"{side}_t0"][lo:hi]
                if other >= 0:  # subject and object: keep the object's facts before sorting the run
                    keep = self.cols["o"][ids] == other
                    ids, t0 = ids[keep], t0[keep]
                return self.unsorted_window(ids, t0, lo_t, hi_t)
            if other >= 0 and len(ids):
                ids = ids[self.cols["o"][ids] == other]
            return ids
        if r >= 0:
            lo, hi = _run(c["r_off"], r)
            return self.window(c["r_ids"][lo:hi], c["r_t0"][lo:hi], lo_t, hi_t) if lo < hi else _EMPTY
        return self.window(c["t_ids"], c["t_t0"], lo_t, hi_t)

    def incident_main(self, ents: IntArray) -> list[IntArray]:
        """Ids of the main part's facts with subject (first array) or object (second) in ``ents``."""
        parts = []
        for side in ("sr", "or"):
            offsets = self.core[f"{side}_off"]
            known = ents[ents + 1 < len(offsets)]
            starts, ends = offsets[known], offsets[known + 1]
            lengths = ends - starts
            total = int(lengths.sum())
            if total:
                shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
                parts.append(
                    self.core[f"{side}_ids"][np.arange(total, dtype=np.int64) + shift].astype(np.int64)
                )
        return parts

    def holds(self, row: tuple[int, int, int, int, int]) -> bool:
        """Whether the main part holds a live fact with key ``(s, r, o, t0, t1)`` (the dedup of appends)."""
        s, r, o, t0, t1 = row
        c = self.core
        lo, hi = _run(c["sr_off"], s)
        if lo >= hi:
            return False
        rs = c["sr_r"][lo:hi]
        lo, hi = lo + int(rs.searchsorted(r)), lo + int(rs.searchsorted(r, "right"))
        if lo >= hi:
            return False
        t0s = c["sr_t0"][lo:hi]
        lo, hi = lo + int(t0s.searchsorted(t0)), lo + int(t0s.searchsorted(t0, "right"))
        ids = np.asarray(c["sr_ids"][lo:hi], dtype=np.int64)
        ids = ids[(self.cols["o"][ids] == o) & (self.cols["t1"][ids] == t1)]
        if len(ids) and len(self.dead):
            ids = ids[~np.isin(ids, self.dead)]
        return bool(len(ids))


def _delta_index() -> dict[str, dict[int, list[int]]]:
    return {k: defaultdict(list) for k in INDEX_KINDS}


def core_bounds(cols: Mapping[str, AnyArray]) -> tuple[int, bool]:
    """``(max_dur, ordered)`` of a core's columns: the longest ``t1 - t0`` (a fact overlapping a window
    ``[a, b]`` starts at or after ``a - max_dur``) and whether no fact ends before it starts."""
    n = len(cols["t0"])
    if not n:
        return 0, True
    max_dur = 0
    ordered = True
    for start in range(0, n, 1 << 22):  # chunks: int64 differences of int32 columns stay small
        d = cols["t1"][start : start + (1 << 22)].astype(np.int64) - cols["t0"][start : start + (1 << 22)]
        max_dur = max(max_dur, int(d.max()))
        ordered = ordered and int(d.min()) >= 0
    return max_dur, ordered


def empty_state() -> State:
    return State(build_core({c: np.zeros(0, dtype=NARROW[c]) for c in COLUMNS}, 0, 0))
