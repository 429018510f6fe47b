"""Benchmark the KG stores side by side (issue #31): in-memory ``TemporalKG`` and ``DuckDBStore`` both on the
compact core, the DuckDB store's SQL path (the pre-#31 read path, ``snapshot=False``) and a pandas reference.

KGs: the MultiTQ KG (``../shared/data/multitq/kg/full_partial.txt``) and a synthetic KG of ``--synthetic N``
point facts generated inside DuckDB by this script, also written as a quadruple text file (both under
``--workdir``, never committed; subjects skewed towards hubs, ``N / 50`` entities, 200 relations, days
1991–2023; the text lists the facts in id order, so both stores hold the same ids).

Backends, each in its own child process (so open time and resident memory are its own):

* ``memory``: ``load_kg(text)`` with its binary cache present (the core memory-mapped: a *warm* open);
* ``memory-build``: ``load_kg(text, cache=False)``, the build from text (a *cold* open; no queries);
* ``duckdb``: ``DuckDBStore.open(file, read_only=True)`` with its snapshot present (warm);
* ``duckdb-build``: the same with the snapshot removed first: the open builds and writes it (cold; no
  queries);
* ``duckdb-sql``: ``DuckDBStore.open(..., snapshot=False)``: every read is SQL (the read path before #31);
* ``pandas``: ARI's per-call DataFrame filtering (``bench/kg_ops.py``), ARI operators only.

Queries (same seeded list for every backend): the ARI operators (``tail``, ``tail@t``, ``head``, ``head@t``,
``time``, ``before``, ``after``, ``first``, ``last``, as in ``bench/kg_ops.py``) and the walks (``incident``,
``hop2`` = ``relations_by_hop(…, 2, max_frontier=200)``, ``lifetime``, ``as_of`` = ``kg.as_of(t).facts(
subject=…)``). Per query the median of ``--reps`` calls; per operator p50/p99 over the queries. Every
backend's answers are compared with the in-memory store's, query by query. Reported: open time, RSS growth
after open and after the queries (bytes per fact resident = the latter / facts), peak RSS, the ratios to the
in-memory store.

    nice -n 10 python bench/store_scale.py --synthetic 0                 # MultiTQ only
    nice -n 10 python bench/store_scale.py --skip-multitq --synthetic 5000000 --pandas-max 0
    nice -n 10 python bench/store_scale.py --skip-multitq --synthetic 20000000 --pandas-max 0 --sql-max 0
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
DEFAULT_KG = REPO.parent / "shared" / "data" / "multitq" / "kg" / "full_partial.txt"
ARI_OPS = ("tail", "tail@t", "head", "head@t", "time", "before", "after", "first", "last")
WALK_OPS = ("incident", "hop2", "lifetime", "as_of")
OPS = ARI_OPS + WALK_OPS
EPOCH = 719163  # day ordinal of 1970-01-01


def rss_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mib() -> float:
    """Peak RSS of this process (VmHWM: unlike ru_maxrss, not inherited from the parent over exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- building the stores ---------------------------------------------------------------------------------
def build_multitq_store(kg_path: Path, out: Path) -> float:
    """Convert the text KG into a DuckDB store (the `tkgqa kg convert` path); returns seconds."""
    from tkgqa.kg.duckdb_store import DuckDBStore
    from tkgqa.kg.loaders import load_kg

    t0 = time.perf_counter()
    DuckDBStore.from_kg(load_kg(kg_path, cache=False), out).close()
    return time.perf_counter() - t0


def build_synthetic_store(n: int, out: Path, seed: float = 0.42) -> float:
    """``n`` random point facts written by DuckDB itself (clustered by subject and day); returns seconds."""
    from tkgqa.kg.duckdb_store import DuckDBStore

    t0 = time.perf_counter()
    n_ent, n_rel = max(1000, n // 50), 200
    store = DuckDBStore(name=out.stem, path=out)
    con = store._sh.con
    con.execute(f"SELECT setseed({seed})")
    con.execute(f"INSERT INTO entities SELECT i, 'E' || i FROM range({n_ent}) t(i)")
    con.execute(f"INSERT INTO relations SELECT i, 'R' || i FROM range({n_rel}) t(i)")
    day0 = EPOCH + 7670  # 1991-01-01
    con.execute(
        f"""INSERT INTO facts
        SELECT i, s, r, o, t0, t0, 3, 3, 0, NULL FROM (
            SELECT i, floor({n_ent} * pow(random(), 2))::INTEGER AS s,
                floor({n_rel} * random())::INTEGER AS r,
                floor({n_ent} * random())::INTEGER AS o, ({day0} + floor(12000 * random()))::INTEGER AS t0
            FROM range({n}) t(i))
        ORDER BY s, t0"""
    )
    con.execute("INSERT INTO facts_by_o SELECT * FROM facts ORDER BY o, t0")
    con.execute("CHECKPOINT")
    text = out.with_suffix(".txt")
    con.execute(
        f"""COPY (SELECT 'E' || s, 'R' || r, 'E' || o,
            strftime(DATE '1970-01-01' + (t0 - {EPOCH}), '%Y-%m-%d') FROM facts ORDER BY id)
        TO '{text}' (DELIMITER '\t', HEADER false, QUOTE '')"""
    )
    store.close()
    return time.perf_counter() - t0


def sample_queries(store_path: Path, n: int, seed: int) -> list[list[str]]:
    """``n`` queries ``[op, subject, relation, object, time]`` from random facts of the store."""
    import random

    from tkgqa.kg.duckdb_store import DuckDBStore

    rng = random.Random(seed)
    with DuckDBStore.open(store_path, read_only=True, snapshot=False) as store:
        rows = (
            store._cur()
            .execute(f"SELECT s, r, o, t0 FROM facts USING SAMPLE {n} ROWS (reservoir, {seed})")
            .fetchall()
        )
        ent, rel = store.entities, store.relations
        queries = []
        for i, (s, r, o, t0) in enumerate(rows):
            day = np.datetime64("1970-01-01") + np.timedelta64(int(t0) - EPOCH, "D")
            text = str(day)[: rng.choice((4, 7, 10))]
            queries.append([OPS[i % len(OPS)], ent[s], rel[r], ent[o], text])
    rng.shuffle(queries)
    return queries


# --- one backend (child process) ---------------------------------------------------------------------------
def run_store_query(kg: Any, q: list[str]) -> Any:
    from kg_ops import ours

    from tkgqa.kg.neighborhood import entity_lifetime, relations_by_hop, subgraph

    op, s, r, o, t = q
    if op in ARI_OPS:
        return ours(kg, (op, s, r, o, t))
    if op == "incident":
        return subgraph(kg, s)
    if op == "hop2":
        return relations_by_hop(kg, s, 2, max_frontier=200)
    if op == "lifetime":
        return entity_lifetime(kg, s)
    return kg.as_of(t).facts(subject=s)


def open_backend(backend: str, source: Path, kind: str) -> tuple[Any, Callable[[Any, list[str]], Any]]:
    if backend.startswith("duckdb"):
        from tkgqa.kg.duckdb_core import snapshot_path
        from tkgqa.kg.duckdb_store import DuckDBStore

        limit = os.environ.get("STORE_SCALE_DUCKDB_MEMORY")  # e.g. 512MB: cap DuckDB's buffer pool
        if backend == "duckdb-build":
            import shutil

            shutil.rmtree(snapshot_path(source), ignore_errors=True)
        store = DuckDBStore.open(source, read_only=True, memory_limit=limit, snapshot=backend != "duckdb-sql")
        return store, run_store_query
    if backend.startswith("memory"):
        from tkgqa.kg.loaders import load_kg

        return load_kg(source, cache=backend == "memory"), run_store_query
    import pandas as pd
    from kg_ops import with_pandas

    df = pd.read_csv(
        source,
        sep="\t",
        names=["head", "rel", "tail", "time"],
        dtype=str,
        keep_default_na=False,
        quoting=3,
    )
    return df, lambda d, q: with_pandas(d, tuple(q)) if q[0] in ARI_OPS else None  # type: ignore[arg-type]


OPEN_ONLY = ("memory-build", "duckdb-build")  # cold opens: timed, no queries


def probe(backend: str, source: Path, kind: str, queries_file: Path, reps: int) -> dict[str, Any]:
    import duckdb  # noqa: F401  imported before the baseline: RSS growth is the store's own
    import kg_ops  # noqa: F401  (the query runner; it imports pandas)
    import pyarrow  # noqa: F401

    import tkgqa.kg.duckdb_store
    import tkgqa.kg.loaders
    import tkgqa.kg.neighborhood  # noqa: F401

    queries = [] if backend in OPEN_ONLY else json.loads(queries_file.read_text())
    rss0 = rss_mib()
    t0 = time.perf_counter()
    kg, run = open_backend(backend, source, kind)
    load_s = time.perf_counter() - t0
    rss1 = rss_mib()
    times: dict[str, list[float]] = {op: [] for op in OPS}
    digests: list[str | int | None] = []
    reps = 1 if backend == "pandas" else reps  # a whole-frame filter per call: one timed call
    for q in queries:
        if backend == "pandas" and q[0] not in ARI_OPS:
            digests.append(None)
            continue
        result = run(kg, q)
        digests.append(hashlib.md5(repr(result).encode()).hexdigest() if backend != "pandas" else len(result))
        laps = []
        for _ in range(reps):
            t = time.perf_counter_ns()
            run(kg, q)
            laps.append(time.perf_counter_ns() - t)
        times[q[0]].append(statistics.median(laps) / 1e6)
    return {
        "backend": backend,
        "facts": len(kg),
        "load_s": load_s,
        "rss_load_mib": rss1 - rss0,
        "rss_after_mib": rss_mib() - rss0,
        "peak_mib": peak_mib(),
        "times_ms": times,
        "digests": digests,
    }


def child(backend: str, source: Path, kind: str, queries_file: Path, reps: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--probe", backend, "--source", str(source), "--kind", kind]
    cmd += ["--queries", str(queries_file), "--reps", str(reps)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{backend} probe failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


# --- report ----------------------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def report(title: str, results: list[dict[str, Any]], extra: list[str]) -> list[str]:
    lines = [f"### {title}", "", *extra, ""]
    lines.append(
        "| backend | facts | open s | RSS after open MiB | RSS after queries MiB | resident B/fact "
        "| peak RSS MiB |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        per_fact = r["rss_after_mib"] * 2**20 / max(1, r["facts"])
        row = f"{r['facts']:,} | {r['load_s']:.2f} | {r['rss_load_mib']:.0f} | {r['rss_after_mib']:.0f}"
        lines.append(f"| {r['backend']} | {row} | {per_fact:.0f} | {r['peak_mib']:.0f} |")
    timed = [r for r in results if r["backend"] not in OPEN_ONLY]
    by = {r["backend"]: r for r in timed}
    if "memory" in by:
        ref = by["memory"]["digests"]
        for r in timed:
            if r["backend"] in ("memory", "pandas"):
                continue
            same = sum(x == y for x, y in zip(ref, r["digests"], strict=True))
            lines.append(f"\n{r['backend']} vs in-memory answers identical: {same}/{len(ref)} queries")
    names = [r["backend"] for r in timed]
    head = "| op | n | " + " | ".join(f"{b} p50 ms | {b} p99 ms" for b in names)
    ratios = [(x, "memory") for x in ("duckdb", "duckdb-sql") if x in by and "memory" in by]
    ratios += [("pandas", "duckdb")] if "pandas" in by and "duckdb" in by else []
    head += "".join(f" | {x}/{y} p50" for x, y in ratios) + " |"
    lines += ["", head, "|---|---:|" + "---:|" * (2 * len(names) + len(ratios))]
    for op in (*OPS, "all"):
        cells, p50 = [], {}
        n = 0
        for r in timed:
            t = r["times_ms"]
            vals = [x for v in t.values() for x in v] if op == "all" else t[op]
            n = max(n, len(vals))
            p50[r["backend"]] = pct(vals, 50)
            cells.append(f"{pct(vals, 50):.3f} | {pct(vals, 99):.3f}" if vals else "– | –")
        rat = [f"{p50[x] / p50[y]:.1f}×" if p50[y] == p50[y] and p50[x] == p50[x] else "–" for x, y in ratios]
        lines.append(f"| {op} | {n} | " + " | ".join(cells) + "".join(f" | {c}" for c in rat) + " |")
    return lines


def compare(title: str, store: Path, text: Path, backends: list[str], args: argparse.Namespace) -> list[str]:
    qfile = store.with_suffix(".queries.json")
    queries = sample_queries(store, args.n, args.seed)
    qfile.write_text(json.dumps(queries))
    warm = f"from tkgqa.kg.loaders import load_kg; load_kg({str(text)!r})"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", warm], check=True)  # the binary cache, for a warm open
    warm_s = time.perf_counter() - t0
    results = []
    for b in backends:
        src = store if b.startswith("duckdb") else text
        print(f"[{title}] {b} …", file=sys.stderr, flush=True)
        results.append(child(b, src, "duckdb" if b.startswith("duckdb") else "text", qfile, args.reps))
    size = store.stat().st_size / 2**20
    core = sum(f.stat().st_size for f in Path(f"{store}.core").glob("*.npy")) / 2**20
    extra = [
        f"DuckDB file: {size:.1f} MiB, its snapshot (`.core/`): {core:.1f} MiB; queries: {len(queries)} "
        f"(seed {args.seed}), median of {args.reps}; load average before: {os.getloadavg()[0]:.1f}; "
        f"in-memory build from text + cache write (a child process, imports included): {warm_s:.1f} s"
    ]
    return report(title, results, extra)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kg", type=Path, default=DEFAULT_KG, help="MultiTQ quadruple file")
    ap.add_argument("--skip-multitq", action="store_true")
    ap.add_argument("--synthetic", type=int, default=5_000_000, help="facts in the synthetic KG (0: none)")
    ap.add_argument("--memory-max", type=int, default=20_000_000, help="largest synthetic KG run in memory")
    ap.add_argument("--pandas-max", type=int, default=5_000_000, help="largest synthetic KG run in pandas")
    ap.add_argument("--sql-max", type=int, default=5_000_000, help="largest synthetic KG run on the SQL path")
    ap.add_argument("--skip-build", action="store_true", help="no memory-build child (the warm-up times it)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/tkgqa_store_scale"))
    ap.add_argument("--n", type=int, default=390, help="queries per KG (30 per operator)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="also write the report (markdown) here")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    ap.add_argument("--source", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--kind", help=argparse.SUPPRESS)
    ap.add_argument("--queries", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args.probe, args.source, args.kind, args.queries, args.reps)))
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    lines = [f"machine: {os.cpu_count()} CPUs (shared), python {sys.version.split()[0]}", ""]
    cold_warm = ["memory-build", "memory", "duckdb-build", "duckdb"]
    if not args.skip_multitq:
        if not args.kg.exists():
            print(f"MultiTQ KG not found: {args.kg} (pass --kg or --skip-multitq)", file=sys.stderr)
            return 2
        store = args.workdir / "multitq.duckdb"
        store.unlink(missing_ok=True)
        convert_s = build_multitq_store(args.kg, store)
        lines += compare("MultiTQ KG", store, args.kg, [*cold_warm, "duckdb-sql", "pandas"], args)
        lines += ["", f"convert text → DuckDB (parse + bulk insert + snapshot): {convert_s:.1f} s", ""]
    if args.synthetic:
        n = args.synthetic
        store = args.workdir / f"synthetic_{n}.duckdb"
        text = store.with_suffix(".txt")
        if not store.exists() or not text.exists():
            store.unlink(missing_ok=True)
            build_s = build_synthetic_store(n, store)
            lines.append(f"synthetic {n:,} facts generated into DuckDB (and text) in {build_s:.1f} s")
        backends = [b for b in cold_warm if not b.startswith("memory") or n <= args.memory_max]
        if args.skip_build:  # the cache warm-up above times the same build
            backends.remove("memory-build")
        backends += [b for b, cap in (("duckdb-sql", args.sql_max), ("pandas", args.pandas_max)) if n <= cap]
        lines += compare(f"synthetic KG, {n:,} facts", store, text, backends, args)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
