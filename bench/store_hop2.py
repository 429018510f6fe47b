"""2-hop walks (``relations_by_hop(kg, e, 2, max_frontier=200)``) on the in-memory and the DuckDB store of one
KG in ONE process, interleaved rounds (the store_scale children run one after the other, so a load swing on
the shared box can land on one backend only).

    python bench/store_hop2.py QUERIES.json KG.txt STORE.duckdb [--rounds 2]

QUERIES.json: the query list ``bench/store_scale.py`` wrote (its ``hop2`` entries are used).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("queries", type=Path)
    ap.add_argument("text", type=Path)
    ap.add_argument("store", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()

    from tkgqa.kg.duckdb_store import DuckDBStore
    from tkgqa.kg.loaders import load_kg
    from tkgqa.kg.neighborhood import relations_by_hop

    qs = [q for q in json.loads(args.queries.read_text()) if q[0] == "hop2"]
    stores = {"memory": load_kg(args.text), "duckdb": DuckDBStore.open(args.store, read_only=True)}
    for kg in stores.values():
        for q in qs:
            relations_by_hop(kg, q[1], 2, max_frontier=200)
    for rnd in range(args.rounds):
        for name, kg in stores.items():
            per = []
            for q in qs:
                laps = []
                for _ in range(3):
                    t = time.perf_counter()
                    relations_by_hop(kg, q[1], 2, max_frontier=200)
                    laps.append(time.perf_counter() - t)
                per.append(statistics.median(laps) * 1000)
            per.sort()
            p50, p99 = statistics.median(per), per[int(0.99 * (len(per) - 1))]
            print(f"round {rnd + 1} {name}: hop2 p50 {p50:.2f} ms, p99 {p99:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
