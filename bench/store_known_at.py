"""``known_at`` views of a DuckDB store (issue #31): answered from the memory-mapped core vs the SQL path of
the same database (the read path before; the store's core set aside), in one process, same queries, and
the answers compared. Per query, four reads through a fresh ``known_at`` view (``facts(subject, relation)``,
``facts(relation, object, time)``, ``incident``, ``as_of(t).facts(subject)``), median of 3.

    python bench/store_known_at.py STORE.duckdb QUERIES.json      # e.g. bench/store_scale.py's files
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tkgqa.kg.duckdb_store import DuckDBStore


def run(view: DuckDBStore, q: list[str]) -> Any:
    _, s, r, o, t = q
    return (
        view.facts(subject=s, relation=r),
        view.facts(relation=r, object=o, time=t),
        view.incident(s),
        view.as_of(t).facts(subject=s),
    )


def bench(store: DuckDBStore, queries: list[list[str]], tx: datetime) -> tuple[list[float], list[Any]]:
    laps, out = [], []
    for q in queries:
        out.append(run(store.known_at(tx), q))
        reps = []
        for _ in range(3):
            t = time.perf_counter()
            run(store.known_at(tx), q)
            reps.append(time.perf_counter() - t)
        laps.append(statistics.median(reps) * 1000)
    return sorted(laps), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("queries", type=Path, help="JSON list of [op, subject, relation, object, time]")
    ap.add_argument("--n", type=int, default=60)
    args = ap.parse_args()
    queries = json.loads(args.queries.read_text())[: args.n]
    tx = datetime(2030, 1, 1, tzinfo=UTC)
    with DuckDBStore.open(args.store, read_only=True) as store:
        t = time.perf_counter()
        store.known_at(tx).facts(subject=queries[0][1])
        print(f"first known_at (reads the transaction log): {(time.perf_counter() - t) * 1000:.1f} ms")
        core_laps, core_out = bench(store, queries, tx)
        sh = store._sh
        core, sh.core = sh.core, None
        try:
            sql_laps, sql_out = bench(store, queries, tx)
        finally:
            sh.core = core
    for label, laps in (("from the core", core_laps), ("with SQL (before)", sql_laps)):
        p99 = laps[max(0, int(len(laps) * 0.99) - 1)]
        p50 = statistics.median(laps)
        print(f"known_at {label}: p50 {p50:.3f} ms, p99 {p99:.3f} ms ({len(laps)} queries)")
    print(f"SQL / core p50: {statistics.median(sql_laps) / statistics.median(core_laps):.0f}x")
    print(f"same answers: {sum(a == b for a, b in zip(core_out, sql_out, strict=True))}/{len(core_out)}")


if __name__ == "__main__":
    main()
