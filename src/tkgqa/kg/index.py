"""The compact columnar core every built-in store reads through (issue #31).

Facts live in dictionary-encoded columns (``s r o t0 t1 g0 g1``: subject, relation and object ids (int32),
first and last day (int32), start and end granularity (int8, 0 for an open end)). Four permutations of the
fact ids (int32) answer every lookup with binary searches and slices:

* ``s``: by (subject, first day, id), with CSR offsets per subject (``s_off``): ``facts(subject)`` is an
  offset lookup and a slice (a binary search over the run's first days for a time window);
* ``sr``: the same runs by (subject, relation, first day, id), with the relation of each entry alongside:
  ``facts(subject, relation)`` is a binary search for the relation inside the subject's run, then one for
  the time window;
* ``o`` and ``or``: the same by object (``incident``, ``facts(object=…)``, ``facts(relation=…, object=…)``);
* ``r``: by (relation, first day, id) with the first days alongside and offsets per relation;
* ``t``: by (first day, id) with the first days alongside (time-only queries, ``as_of`` iteration).

That is 22 bytes of columns and 40 of permutations, 62 bytes per fact. Searches pass int32 values to
``searchsorted`` (an int64 value would make numpy cast the whole searched slice first). The arrays are
plain numpy arrays, so they may be memory-mapped ``.npy`` files (:mod:`tkgqa.kg.core_files`): a cached
store opens without reading them and processes share the pages. Results come in (first day, id) order:
start order, ties in insertion order, the rule of :mod:`tkgqa.kg.base`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..machine import usable_cpus
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
    *("s_ids", "s_off", "sr_ids", "sr_r", "o_ids", "o_off", "or_ids", "or_r"),
    *("r_ids", "r_t0", "r_off", "t_ids", "t_t0"),
)
CORE_ARRAYS = tuple(f"col_{c}" for c in COLUMNS) + PERM_ARRAYS
R_BITS, E_BITS = 18, 22
MAX_ENTITIES, MAX_RELATIONS = 1 << E_BITS, 1 << R_BITS
_EMPTY = np.zeros(0, dtype=np.int64)
_PARALLEL_MIN = 1 << 20  # cores built in two threads from this many facts on


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
    """``order`` re-sorted stably by ``key`` (equal keys keep ``order``'s order): ``order[np.argsort(
    key[order], kind="stable")]``, computed as a least-significant-digit radix sort, one stable pass per
    16 bits of the key's range (numpy's stable argsort of 16-bit values is a radix sort: ~8x faster than
    its stable sort of wider ones, and a pass is stable, so the passes compose)."""
    if not len(order):
        return order
    k = key[order].astype(np.int64)
    low = int(k.min())
    if low:
        k -= low
    bits = max(1, int(k.max()).bit_length())
    for shift in range(0, bits, 16):
        step = np.argsort((k >> shift).astype(np.uint16), kind="stable")  # the cast keeps the low 16 bits
        order = order[step]
        if shift + 16 < bits:
            k = k[step]
    return order


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
        out.update({k: np.asarray(known[k]) for k in PERM_ARRAYS})  # plain views of mapped files; offsets
        # may be shorter than a grown vocabulary
        return out
    n_entities = max(n_entities, int(out["col_s"].max(initial=-1)) + 1, int(out["col_o"].max(initial=-1)) + 1)
    n_relations = max(n_relations, int(out["col_r"].max(initial=-1)) + 1)
    s, r, o, t0 = (out[f"col_{c}"] for c in ("s", "r", "o", "t0"))
    by_t = _then_by(np.arange(n, dtype=np.int64), t0)  # (first day, id)
    by_r = _then_by(by_t, r)  # (relation, first day, id)

    def side(name: str, key: AnyArray) -> dict[str, AnyArray]:
        pair = _then_by(by_r, key)  # (key, relation, first day, id): by_r re-sorted stably by key
        return {
            f"{name}_ids": _then_by(by_t, key).astype(np.int32),
            f"{name}r_ids": pair.astype(np.int32),
            f"{name}r_r": r[pair],
            f"{name}_off": _offsets(key, n_entities),
        }

    def by_relation() -> dict[str, AnyArray]:
        return {"r_ids": by_r.astype(np.int32), "r_t0": t0[by_r], "r_off": _offsets(r, n_relations)}

    # independent families of sorts; numpy releases the GIL while it sorts and gathers, so on a large
    # store they run on two cores (2 workers: each holds a few n-sized temporaries)
    tasks: list[Callable[[], dict[str, AnyArray]]] = [lambda: side("s", s), lambda: side("o", o), by_relation]
    if n >= _PARALLEL_MIN and usable_cpus() > 1:
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="tkgqa-core") as pool:
            for part in pool.map(lambda task: task(), tasks):
                out.update(part)
    else:
        for task in tasks:
            out.update(task())
    out["t_ids"], out["t_t0"] = by_t.astype(np.int32), t0[by_t]
    return out


_I32_MIN, _I32_MAX = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)


def i32(value: int) -> np.int32:
    """``value`` as an int32 search key (clamped: a bound beyond the int32 range matches as the range end)."""
    if _I32_MIN <= value <= _I32_MAX:
        return np.int32(value)
    return np.int32(_I32_MIN if value < 0 else _I32_MAX)


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
    upto: int | None = None  # only the ids below it are shown (a transaction-time view; None: all)
    cols: dict[str, AnyArray] = field(init=False)

    def __post_init__(self) -> None:
        self.cols = {c: self.core[f"col_{c}"] for c in COLUMNS}

    @property
    def n_total(self) -> int:
        """How many fact ids this state shows at most (``upto`` applied; withdrawn ones included)."""
        n = self.n_main + len(self.delta)
        return n if self.upto is None else min(n, self.upto)

    def visible(self, ids: AnyArray) -> AnyArray:
        """``ids`` without those this state does not show (at or beyond ``upto``, withdrawn), order kept."""
        if self.upto is not None and len(ids):
            ids = ids[ids < self.upto]
        if len(self.dead) and len(ids):
            ids = ids[~np.isin(ids, self.dead)]
        return ids

    # --- searches of the main part -------------------------------------------------------------------------
    def window(self, ids: AnyArray, t0: AnyArray, lo_t: int, hi_t: int) -> AnyArray:
        """Of a run of ``ids`` sorted by first day (``t0``), those whose span meets ``[lo_t, hi_t]``."""
        lo, hi = 0, len(ids)
        if not hi or (hi_t >= POS_INF and lo_t <= NEG_INF):
            return ids
        if hi_t < POS_INF:
            hi = int(t0.searchsorted(i32(hi_t), "right"))  # starts no later than the window's end
        if lo_t <= NEG_INF or lo >= hi:
            return ids[lo:hi]
        sure = min(hi, int(t0.searchsorted(i32(lo_t)))) if self.ordered else hi  # these start in the window
        maybe = 0 if lo_t - self.max_dur <= NEG_INF else int(t0.searchsorted(i32(lo_t - self.max_dur)))
        if maybe >= sure:
            return ids[sure:hi]
        early = ids[maybe:sure]
        early = early[self.cols["t1"][early] >= lo_t]  # started earlier, still running at the window
        return np.concatenate([early, ids[sure:hi]]) if len(early) else ids[sure:hi]

    def main_ids(self, s: int, r: int, o: int, lo_t: int, hi_t: int) -> AnyArray:
        """Ids of the main part matching the pattern (``-1`` = any) and meeting the day window, in
        (first day, id) order: binary searches and slices of the permutations (int32 or int64 ids)."""
        c, t0 = self.core, self.cols["t0"]
        if s >= 0 or o >= 0:
            side, key, other = ("s", s, o) if s >= 0 else ("o", o, -1)
            lo, hi = _run(c[f"{side}_off"], key)
            if lo >= hi:
                return _EMPTY
            if r >= 0:
                rs = c[f"{side}r_r"][lo:hi]
                r32 = i32(r)
                lo, hi = lo + int(rs.searchsorted(r32)), lo + int(rs.searchsorted(r32, "right"))
                ids = c[f"{side}r_ids"][lo:hi]
            else:
                ids = c[f"{side}_ids"][lo:hi]
            if other >= 0:  # subject and object: the object's facts of the subject's run
                ids = ids[self.cols["o"][ids] == other]
            return self.window(ids, t0[ids], lo_t, hi_t) if lo_t > NEG_INF or hi_t < POS_INF else ids
        if r >= 0:
            lo, hi = _run(c["r_off"], r)
            return self.window(c["r_ids"][lo:hi], c["r_t0"][lo:hi], lo_t, hi_t) if lo < hi else _EMPTY
        return self.window(c["t_ids"], c["t_t0"], lo_t, hi_t)

    def incident_main(self, ents: IntArray) -> list[IntArray]:
        """Ids of the main part's facts with subject (first array) or object (second, without the facts
        whose subject is in ``ents`` too: each fact once) in ``ents`` (unique entity ids)."""
        parts = []
        c = self.core
        size = max(len(c["s_off"]), len(c["o_off"]))
        in_ents = np.zeros(size, dtype=bool)
        in_ents[ents[ents < size]] = True
        for side in ("s", "o"):
            offsets = c[f"{side}_off"]
            known = ents[ents + 1 < len(offsets)]
            starts, ends = offsets[known], offsets[known + 1]
            lengths = ends - starts
            total = int(lengths.sum())
            if total:
                shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
                ids = c[f"{side}_ids"][np.arange(total, dtype=np.int64) + shift]
                if side == "o":
                    subjects = self.cols["s"][ids]
                    ids = ids[~in_ents[np.minimum(subjects, size - 1)] | (subjects >= size)]
                parts.append(ids.astype(np.int64))
        return parts

    def holds(self, row: tuple[int, int, int, int, int]) -> bool:
        """Whether the main part holds a live fact with key ``(s, r, o, t0, t1)`` (the dedup of appends)."""
        s, r, o, t0, t1 = row
        ids = self.main_ids(s, r, o, NEG_INF, POS_INF)
        cols = self.cols
        ids = ids[(cols["t0"][ids] == t0) & (cols["t1"][ids] == t1)]
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
