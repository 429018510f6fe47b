"""Benchmark the KG store: our ARI operators vs a straightforward pandas implementation.

Loads the MultiTQ KG (``../shared/data/multitq/kg/full_partial.txt`` from the repo root, or ``--kg``), times
cold and cached loads and memory, then runs the same seeded random queries through our public API
(``get_tail_entity``/``get_head_entity``/``get_time`` with and without time, ``get_before``/``get_after``/
``get_first``/``get_last`` over an entity lookup) and through pandas DataFrame filtering per call (as ARI's
reference code does), checks that both return the same facts, and prints p50/p90 per operator.

Our per-query time is the median of ``--reps`` calls on a store whose Fact objects were built up front
(``materialize()``, timed and reported with the load); the first-touch p50 on a store fresh from the cache
is printed too. The last line is ``ratio_vs_pandas=<median pandas time / median our time>``.

    .venv/bin/python bench/kg_ops.py [--kg PATH] [--n 1000] [--seed 0] [--reps 5]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tkgqa.kg import (
    Fact,
    TemporalKG,
    get_after,
    get_before,
    get_first,
    get_head_entity,
    get_last,
    get_tail_entity,
    get_time,
)
from tkgqa.kg.loaders import load_kg

REPO = Path(__file__).resolve().parents[1]
DEFAULT_KG = REPO.parent / "shared" / "data" / "multitq" / "kg" / "full_partial.txt"
OPS = ("tail", "tail@t", "head", "head@t", "time", "before", "after", "first", "last")
Query = tuple[str, str, str, str, str]  # op, subject, relation, object, time text
Row = tuple[str, str, str, str]


def rss_mib() -> float:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- the two implementations ---------------------------------------------------------------------------
def ours(kg: TemporalKG, q: Query) -> list[Fact]:
    op, s, r, o, t = q
    if op == "tail":
        return get_tail_entity(kg, s, r)
    if op == "tail@t":
        return get_tail_entity(kg, s, r, t)
    if op == "head":
        return get_head_entity(kg, o, r)
    if op == "head@t":
        return get_head_entity(kg, o, r, t)
    if op == "time":
        return get_time(kg, s, r, o)
    facts = get_tail_entity(kg, s, r)
    if op == "before":
        return get_before(facts, t)
    if op == "after":
        return get_after(facts, t)
    return get_first(facts) if op == "first" else get_last(facts)


def pd_lookup(
    df: pd.DataFrame, h: str | None, r: str | None, t: str | None, time: str | None
) -> pd.DataFrame:
    """ARI's ``get_data_compare``: filter the whole frame per call."""
    new = df
    if r:
        new = new[new["rel"] == r]
    if h:
        new = new[new["head"] == h]
    if t:
        new = new[new["tail"] == t]
    if time:
        new = new[new["time"].str.startswith(time)]
    return new


def with_pandas(df: pd.DataFrame, q: Query) -> Any:
    op, s, r, o, t = q
    if op in {"tail", "tail@t"}:
        return pd_lookup(df, s, r, None, t if op == "tail@t" else None).to_numpy()
    if op in {"head", "head@t"}:
        return pd_lookup(df, None, r, o, t if op == "head@t" else None).to_numpy()
    if op == "time":
        return pd_lookup(df, s, r, o, None).to_numpy()
    sub = pd_lookup(df, s, r, None, None)
    if op == "before":  # ends before t begins: ISO strings compare like days ("2015-02-28" < "2015-03")
        return sub[sub["time"] < t].to_numpy()
    if op == "after":  # starts after t ends
        return sub[sub["time"].str[: len(t)] > t].to_numpy()
    if sub.empty:
        return sub.to_numpy()
    edge = sub["time"].min() if op == "first" else sub["time"].max()
    return sub[sub["time"] == edge].to_numpy()


# --- queries ---------------------------------------------------------------------------------------------
def make_queries(df: pd.DataFrame, n: int, seed: int) -> list[Query]:
    rng = random.Random(seed)
    rows = df.to_numpy()
    queries = []
    for i in range(n):
        s, r, o, d = (str(x) for x in rows[rng.randrange(len(rows))])
        t = d[: rng.choice((4, 7, 10))]  # year, month or day question over day facts
        queries.append((OPS[i % len(OPS)], s, r, o, t))
    rng.shuffle(queries)
    return queries


def as_rows(result: Any) -> Counter[Row]:
    if isinstance(result, list):
        return Counter((f.subject, f.relation, f.object, f.start.iso() if f.start else "") for f in result)
    return Counter(tuple(str(x) for x in row) for row in result)  # type: ignore[misc]


def timed(fn: Callable[[], Any], reps: int) -> float:
    """Median wall time of ``reps`` calls, in seconds."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e9


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q))


def cold_load_and_first_touch(path: Path, queries: list[Query]) -> tuple[float, list[float]]:
    """Parse the file without the cache (timed), then time each query once on that fresh store."""
    t0 = time.perf_counter()
    fresh = load_kg(path, cache=False)
    cold_s = time.perf_counter() - t0
    return cold_s, [timed(lambda q=q: ours(fresh, q), 1) for q in queries]  # type: ignore[misc]


# --- main -----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--kg", type=Path, default=DEFAULT_KG, help="quadruple file (default: MultiTQ full_partial)"
    )
    ap.add_argument("--n", type=int, default=1000, help="number of random queries")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=5, help="timed calls per query for our store")
    args = ap.parse_args(argv)
    if not args.kg.exists():
        print(f"KG file not found: {args.kg} (pass --kg)", file=sys.stderr)
        return 2

    # Fill the cache in a child process, so that this process measures a clean cached load.
    subprocess.run(
        [sys.executable, "-c", f"from tkgqa.kg.loaders import load_kg; load_kg({str(args.kg)!r})"], check=True
    )
    gc.collect()
    rss0 = rss_mib()
    t0 = time.perf_counter()
    kg = load_kg(args.kg)
    cached_s = time.perf_counter() - t0
    rss1 = rss_mib()
    assert kg.load_report is not None and kg.load_report.from_cache
    core = kg.to_arrays()[3]  # the compact core: columns and permutations (kg/index.py)
    array_mib = sum(a.nbytes for a in core.values()) / 2**20

    t0 = time.perf_counter()
    df = pd.read_csv(
        args.kg, sep="\t", names=["head", "rel", "tail", "time"], dtype=str, keep_default_na=False, quoting=3
    )
    pandas_load_s = time.perf_counter() - t0
    queries = make_queries(df, args.n, args.seed)
    cold_s, first_touch = cold_load_and_first_touch(args.kg, queries)
    gc.collect()

    rss2 = rss_mib()
    t0 = time.perf_counter()
    kg.materialize()
    materialize_s = time.perf_counter() - t0
    rss3 = rss_mib()

    mismatches = 0
    our_t: dict[str, list[float]] = {op: [] for op in OPS}
    pd_t: dict[str, list[float]] = {op: [] for op in OPS}
    first_t: dict[str, list[float]] = {op: [] for op in OPS}
    sizes: list[int] = []
    for q, ft in zip(queries, first_touch, strict=True):
        got, want = ours(kg, q), with_pandas(df, q)
        sizes.append(len(got))
        if as_rows(got) != as_rows(want):
            mismatches += 1
            if mismatches <= 5:
                print(f"MISMATCH {q}: ours {len(got)} facts, pandas {len(want)} rows")
        our_t[q[0]].append(timed(lambda q=q: ours(kg, q), args.reps))  # type: ignore[misc]
        pd_t[q[0]].append(timed(lambda q=q: with_pandas(df, q), 1))  # type: ignore[misc]
        first_t[q[0]].append(ft)

    print(f"kg: {args.kg} ({len(kg):,} facts, {len(kg.entities):,} entities, {len(kg.relations)} relations)")
    print(f"cold load (parse + index, no cache): {cold_s:.3f} s; pandas read_csv: {pandas_load_s:.3f} s")
    print(f"cached load (.npz): {cached_s:.3f} s; materialize all Fact objects: {materialize_s:.3f} s")
    print(
        f"memory: RSS +{rss1 - rss0:.1f} MiB after the cached load (numpy arrays {array_mib:.1f} MiB), "
        f"+{rss3 - rss2:.1f} MiB for the Fact objects"
    )
    size_p50, size_p90 = pct(sizes, 50), pct(sizes, 90)
    print(f"queries: {args.n} (seed {args.seed}); facts per answer p50 {size_p50:.0f}, p90 {size_p90:.0f}")
    cells = ("op", "n", "ours p50", "p90", "1st-touch", "pandas p50", "p90", "ratio")
    print(
        "{:8} {:>4} {:>9} {:>9} {:>10} {:>11} {:>9} {:>8}".format(*cells)
        + "    (ours and 1st-touch in µs, pandas in ms; ratio = pandas p50 / ours p50)"
    )
    for op in (*OPS, "all"):
        o = [x for v in our_t.values() for x in v] if op == "all" else our_t[op]
        p = [x for v in pd_t.values() for x in v] if op == "all" else pd_t[op]
        f = [x for v in first_t.values() for x in v] if op == "all" else first_t[op]
        print(
            f"{op:8} {len(o):>4} {pct(o, 50) * 1e6:>9.1f} {pct(o, 90) * 1e6:>9.1f} {pct(f, 50) * 1e6:>10.1f} "
            f"{pct(p, 50) * 1e3:>11.2f} {pct(p, 90) * 1e3:>9.2f} {pct(p, 50) / pct(o, 50):>8.0f}"
        )
    all_ours = [x for v in our_t.values() for x in v]
    all_pd = [x for v in pd_t.values() for x in v]
    all_first = [x for v in first_t.values() for x in v]
    print(f"identical results: {args.n - mismatches}/{args.n}")
    first_ratio = statistics.median(all_pd) / statistics.median(all_first)
    print(
        f"first-touch ratio (each query's first call on a fresh store, Facts built then): {first_ratio:.1f}"
    )
    print(f"ratio_vs_pandas={statistics.median(all_pd) / statistics.median(all_ours):.1f}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
