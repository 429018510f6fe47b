"""Benchmark the KG stores side by side: in-memory ``TemporalKG`` vs ``DuckDBStore`` vs a pandas reference.

Two KGs: the MultiTQ KG (``../shared/data/multitq/kg/full_partial.txt``) and a synthetic KG of
``--synthetic N`` point facts generated inside DuckDB by this script (written to ``--workdir``, never
committed; subjects skewed towards hubs, ``N / 50`` entities, 200 relations, days 1991–2023).

Each backend runs in its own child process (so load time and resident memory are its own) on the same
seeded query list: the ARI operators (``tail``, ``tail@t``, ``head``, ``head@t``, ``time``, ``before``,
``after``, ``first``, ``last``, as in ``bench/kg_ops.py``) and the walks (``incident``, ``hop2`` =
``relations_by_hop(…, 2)``, ``lifetime``, ``as_of`` = ``kg.as_of(t).facts(subject=…)``). Per query the
median of ``--reps`` calls; per operator p50/p99 over the queries. The in-memory and DuckDB answers are
compared query by query (they must be identical); pandas answers only the ARI operators (ARI's own
per-call DataFrame filtering, ``bench/kg_ops.py``). Reported: load/open time, RSS after load and peak,
file size, and the ratios DuckDB / in-memory and pandas / DuckDB.

    nice -n 10 .venv/bin/python bench/store_scale.py                      # MultiTQ + 5M synthetic
    nice -n 10 .venv/bin/python bench/store_scale.py --skip-multitq --synthetic 20000000 --memory-max 0 \\
        --pandas-max 0                                                    # the 20M-fact DuckDB store alone
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
    store.close()
    return time.perf_counter() - t0


def sample_queries(store_path: Path, n: int, seed: int) -> list[list[str]]:
    """``n`` queries ``[op, subject, relation, object, time]`` from random facts of the store."""
    import random

    from tkgqa.kg.duckdb_store import DuckDBStore

    rng = random.Random(seed)
    with DuckDBStore.open(store_path, read_only=True) as store:
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
    if backend == "duckdb":
        from tkgqa.kg.duckdb_store import DuckDBStore

        limit = os.environ.get("STORE_SCALE_DUCKDB_MEMORY")  # e.g. 512MB: cap DuckDB's buffer pool
        return DuckDBStore.open(source, read_only=True, memory_limit=limit), run_store_query
    if backend == "memory":
        if kind == "text":
            from tkgqa.kg.loaders import load_kg

            return load_kg(source), run_store_query  # the npz cache, warmed by the parent
        from tkgqa.kg.duckdb_io import load_duckdb

        return load_duckdb(source), run_store_query
    import pandas as pd
    from kg_ops import with_pandas

    if kind == "text":
        df = pd.read_csv(
            source,
            sep="\t",
            names=["head", "rel", "tail", "time"],
            dtype=str,
            keep_default_na=False,
            quoting=3,
        )
    else:
        import duckdb

        con = duckdb.connect(str(source), read_only=True)
        df = con.execute(
            f"""SELECT e1.name AS head, rl.name AS rel, e2.name AS tail,
                strftime(DATE '1970-01-01' + (t0 - {EPOCH}), '%Y-%m-%d') AS time
            FROM facts f JOIN entities e1 ON f.s = e1.id JOIN relations rl ON f.r = rl.id
                JOIN entities e2 ON f.o = e2.id ORDER BY f.id"""
        ).df()
        con.close()
    return df, lambda d, q: with_pandas(d, tuple(q)) if q[0] in ARI_OPS else None  # type: ignore[arg-type]


def probe(backend: str, source: Path, kind: str, queries_file: Path, reps: int) -> dict[str, Any]:
    queries = json.loads(queries_file.read_text())
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
        "rss_mib": rss_mib(),
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
    lines.append("| backend | facts | load/open s | RSS after load MiB | peak RSS MiB |")
    lines.append("|---|---:|---:|---:|---:|")
    for r in results:
        row = f"{r['facts']:,} | {r['load_s']:.2f} | {r['rss_load_mib']:.0f} | {r['peak_mib']:.0f}"
        lines.append(f"| {r['backend']} | {row} |")
    by = {r["backend"]: r for r in results}
    if "memory" in by and "duckdb" in by:
        a, b = by["memory"]["digests"], by["duckdb"]["digests"]
        same = sum(x == y for x, y in zip(a, b, strict=True))
        lines += ["", f"in-memory vs DuckDB answers identical: {same}/{len(a)} queries"]
    names = [r["backend"] for r in results]
    head = "| op | n | " + " | ".join(f"{b} p50 ms | {b} p99 ms" for b in names)
    ratios = [("duckdb", "memory"), ("pandas", "duckdb")]
    ratios = [(x, y) for x, y in ratios if x in by and y in by]
    head += "".join(f" | {x}/{y} p50" for x, y in ratios) + " |"
    lines += ["", head, "|---|---:|" + "---:|" * (2 * len(names) + len(ratios))]
    for op in (*OPS, "all"):
        cells, p50 = [], {}
        n = 0
        for r in results:
            t = r["times_ms"]
            vals = [x for v in t.values() for x in v] if op == "all" else t[op]
            n = max(n, len(vals))
            p50[r["backend"]] = pct(vals, 50)
            cells.append(f"{pct(vals, 50):.3f} | {pct(vals, 99):.3f}" if vals else "– | –")
        rat = [f"{p50[x] / p50[y]:.1f}×" if p50[y] == p50[y] and p50[x] == p50[x] else "–" for x, y in ratios]
        lines.append(f"| {op} | {n} | " + " | ".join(cells) + "".join(f" | {c}" for c in rat) + " |")
    return lines


def compare(
    title: str, store: Path, text: Path | None, backends: list[str], args: argparse.Namespace
) -> list[str]:
    qfile = store.with_suffix(".queries.json")
    queries = sample_queries(store, args.n, args.seed)
    qfile.write_text(json.dumps(queries))
    source, kind = (text, "text") if text is not None else (store, "duckdb")
    results = []
    for b in backends:
        src = store if b == "duckdb" else source
        assert src is not None
        print(f"[{title}] {b} …", file=sys.stderr, flush=True)
        results.append(child(b, src, "duckdb" if b == "duckdb" else kind, qfile, args.reps))
    size = store.stat().st_size / 2**20
    extra = [
        f"DuckDB file: {size:.1f} MiB; queries: {len(queries)} (seed {args.seed}), median of {args.reps}"
    ]
    return report(title, results, extra)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kg", type=Path, default=DEFAULT_KG, help="MultiTQ quadruple file")
    ap.add_argument("--skip-multitq", action="store_true")
    ap.add_argument("--synthetic", type=int, default=5_000_000, help="facts in the synthetic KG (0: none)")
    ap.add_argument("--memory-max", type=int, default=5_000_000, help="largest synthetic KG run in memory")
    ap.add_argument("--pandas-max", type=int, default=5_000_000, help="largest synthetic KG run in pandas")
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
    if not args.skip_multitq:
        if not args.kg.exists():
            print(f"MultiTQ KG not found: {args.kg} (pass --kg or --skip-multitq)", file=sys.stderr)
            return 2
        store = args.workdir / "multitq.duckdb"
        store.unlink(missing_ok=True)
        convert_s = build_multitq_store(args.kg, store)
        warm = f"from tkgqa.kg.loaders import load_kg; load_kg({str(args.kg)!r})"
        subprocess.run([sys.executable, "-c", warm], check=True)  # the npz cache, for a warm in-memory load
        lines += compare("MultiTQ KG", store, args.kg, ["memory", "duckdb", "pandas"], args)
        lines += ["", f"convert text → DuckDB (parse + bulk insert): {convert_s:.1f} s", ""]
    if args.synthetic:
        n = args.synthetic
        store = args.workdir / f"synthetic_{n}.duckdb"
        if not store.exists():
            build_s = build_synthetic_store(n, store)
            lines.append(f"synthetic {n:,} facts generated into DuckDB in {build_s:.1f} s")
        backends = [
            b
            for b, cap in (("memory", args.memory_max), ("duckdb", n), ("pandas", args.pandas_max))
            if n <= cap
        ]
        lines += compare(f"synthetic KG, {n:,} facts", store, None, backends, args)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
