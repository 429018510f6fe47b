"""Retrieval benchmark: embedders, vector indexes, BM25 and model2vec-vs-MiniLM agreement, side by side.

    .venv/bin/python bench/retrieval.py [--sample 2000] [--questions 25] [--candidates 200] [--no-minilm]

Sections (MultiTQ parts are skipped cleanly when ../shared/data/multitq is absent; set TKGQA_SHARED_DATA
to point elsewhere):
1. embedding throughput, facts/s, on ``--sample`` MultiTQ fact sentences: MiniLM vs model2vec vs hashing
   (raw encoders, no cache; load / distillation time shown separately);
2. top-15 latency per single query on a 227k-vector index: faiss flat vs HNSW vs numpy brute force (model2vec
   vectors of the whole KG, or random unit vectors without the data), plus HNSW recall@15 against flat;
3. BM25 (bm25s) index build and query latency on the same sentences;
4. model2vec (and hashing) vs MiniLM: top-15 agreement on gold MultiTQ questions, dense scoring scoped to
   the facts around entities found in the question, and answer coverage of each top-15.
Embeddings for section 4 go through the on-disk cache in ``$TKGQA_HOME`` (a rerun is fast).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from tkgqa.kg import Fact, TemporalKG
from tkgqa.retrieval import (
    BM25Retriever,
    Embedder,
    Retriever,
    build_index,
    faiss_available,
    resolve_embedder,
    verbalize_facts,
)
from tkgqa.time import TimePoint

N_INDEX = 227_030
K = 15


def shared_data() -> Path:
    env = os.environ.get("TKGQA_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load_multitq_kg(path: Path) -> TemporalKG:
    facts = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                continue
            y, m, d = (int(x) for x in parts[3].split("-"))
            t = TimePoint(y, m, d)
            facts.append(Fact(parts[0], parts[1], parts[2], t, t))
    return TemporalKG(facts, name="multitq-partial")


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def section(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 90 - len(title)))


# --- 1. throughput --------------------------------------------------------------------------------
def bench_throughput(texts: list[str], use_minilm: bool) -> dict[str, Embedder]:
    section(f"1. embedding throughput on {len(texts):,} MultiTQ fact sentences (no cache)")
    specs = ["hashing", "model2vec"] + (["minilm"] if use_minilm else [])
    rates: dict[str, float] = {}
    loaded: dict[str, Embedder] = {}
    print(f"{'embedder':<28}{'dim':>6}{'load s':>10}{'encode s':>10}{'facts/s':>12}")
    for spec in specs:
        if spec == "model2vec" and not have("model2vec"):
            print(f"{spec:<28} skipped: model2vec not installed")
            continue
        if spec == "minilm" and not have("sentence_transformers"):
            print(f"{spec:<28} skipped: sentence-transformers not installed")
            continue
        emb = resolve_embedder(spec)
        _, load_s = timed(partial(emb.encode, ["warm up"]))  # loads (or distils once) the model
        batch = 64 if spec == "minilm" else 256
        _, enc_s = timed(partial(emb.encode, texts, batch_size=batch))
        rates[emb.name] = len(texts) / enc_s
        loaded[spec] = emb
        print(f"{emb.name:<28}{emb.dim:>6}{load_s:>10.2f}{enc_s:>10.2f}{rates[emb.name]:>12,.0f}")
    if "minilm" in rates:
        for name, rate in rates.items():
            if name != "minilm":
                print(f"  {name} / minilm speed ratio: {rate / rates['minilm']:,.0f}x")
        print(f"  MiniLM would need {N_INDEX / rates['minilm'] / 60:.1f} min for all {N_INDEX:,} facts")
    return loaded


# --- 2. vector index latency ----------------------------------------------------------------------
def latency_ms(search: Callable[[np.ndarray], Any], queries: np.ndarray) -> float:
    search(queries[:1])
    start = time.perf_counter()
    for q in queries:
        search(q[None, :])
    return (time.perf_counter() - start) / len(queries) * 1000


def bench_index(vectors: np.ndarray, queries: np.ndarray, label: str, hnsw: bool) -> None:
    section(f"2. top-{K} latency per query on {len(vectors):,} x {vectors.shape[1]} ({label})")
    if not faiss_available():
        idx = build_index(vectors, "numpy")
        print(
            f"faiss not installed: numpy brute force {latency_ms(lambda q: idx.search(q, K), queries):.2f} ms"
        )
        return
    import faiss

    rows: list[tuple[str, float, float, float]] = []
    np_idx, build_s = timed(lambda: build_index(vectors, "numpy"))
    rows.append(("numpy brute force", build_s, latency_ms(lambda q: np_idx.search(q, K), queries), 1.0))
    truth = np_idx.search(queries, K)[1]
    flat, build_s = timed(lambda: build_index(vectors, "flat"))
    threads = faiss.omp_get_max_threads()
    rows.append(
        (f"faiss flat ({threads} threads)", build_s, latency_ms(lambda q: flat.search(q, K), queries), 1.0)
    )
    faiss.omp_set_num_threads(1)
    rows.append(("faiss flat (1 thread)", 0.0, latency_ms(lambda q: flat.search(q, K), queries), 1.0))
    faiss.omp_set_num_threads(threads)
    if hnsw:
        h, build_s = timed(lambda: build_index(vectors, "hnsw"))  # m=32, ef_construction=80
        for ef in (64, 128, 256, 512):
            h.index.hnsw.efSearch = ef  # type: ignore[attr-defined]
            found = h.search(queries, K)[1]
            recall = float(np.mean([len(set(a) & set(b)) / K for a, b in zip(found, truth, strict=True)]))
            rows.append(
                (f"faiss HNSW m=32 ef={ef}", build_s, latency_ms(lambda q: h.search(q, K), queries), recall)
            )
            build_s = 0.0
    print(f"{'index':<30}{'build s':>10}{'ms/query':>10}{'recall@15':>11}{'vs flat':>9}")
    flat_ms = rows[1][2]
    for name, b, ms, rec in rows:
        print(f"{name:<30}{b:>10.2f}{ms:>10.2f}{rec:>11.3f}{flat_ms / ms:>8.1f}x")
    print(
        f"  goal < 10 ms per top-{K} query: "
        + ", ".join(f"{n}: {'ok' if ms < 10 else 'no'}" for n, _, ms, _ in rows)
    )


# --- 3. BM25 --------------------------------------------------------------------------------------
def bench_bm25(texts: list[str], questions: list[str]) -> None:
    section(f"3. BM25 on {len(texts):,} fact sentences")
    for backend in ("bm25s", "python"):
        if backend == "bm25s" and not have("bm25s"):
            print("bm25s not installed")
            continue
        bm, build_s = timed(partial(BM25Retriever, texts, backend=backend))
        start = time.perf_counter()
        for q in questions:
            bm.search(q, K)
        ms = (time.perf_counter() - start) / len(questions) * 1000
        print(
            f"{backend:<10} build {build_s:6.2f} s   query {ms:7.2f} ms (top-{K}, {len(questions)} questions)"
        )


# --- 4. agreement ---------------------------------------------------------------------------------
def link_entities(question: str, labels: list[tuple[str, str]]) -> list[str]:
    """Entities whose label occurs in the question, longest first, non-overlapping."""
    found, taken = [], question
    for label, name in labels:
        if len(label) > 3 and label in taken:
            found.append(name)
            taken = taken.replace(label, " ")
    return found


def covers(hit: Fact, answers: list[str]) -> bool:
    names = {hit.subject.replace("_", " "), hit.object.replace("_", " ")}
    day = hit.start.iso() if hit.start else ""
    return any(a in names or (a[:4].isdigit() and day.startswith(a)) for a in answers)


def bench_agreement(
    kg: TemporalKG, gold: list[dict[str, Any]], embedders: dict[str, Embedder], args: Any
) -> None:
    section(f"4. agreement with MiniLM: top-{K} over the facts around linked entities")
    if "minilm" not in embedders:
        print("skipped: MiniLM unavailable (or --no-minilm)")
        return
    labels = sorted(((e.replace("_", " "), e) for e in kg.entities), key=lambda x: -len(x[0]))
    rng = random.Random(0)
    retrievers = {spec: Retriever(emb, pool_size=100) for spec, emb in embedders.items()}
    table_owner = retrievers["minilm"]
    cases = []
    for item in gold:
        ents = link_entities(item["question"], labels)
        ids = table_owner.candidates_around(kg, ents)
        if len(ids) < K:
            continue
        if len(ids) > args.candidates:
            ids = sorted(rng.sample(ids, args.candidates))
        cases.append((item, ids))
        if len(cases) == args.questions:
            break
    n_cand = sum(len(ids) for _, ids in cases)
    n_tc = sum(table_owner.resolve_constraint(it["question"], "auto") is not None for it, _ in cases)
    print(f"{len(cases)} questions, {n_cand:,} candidate facts (MiniLM embeds them once; cached afterwards)")
    print(
        f"time constraint (with a question time; bare first/last are not reranked) read from {n_tc} "
        f"questions; rerank: top-100 by cosine → top-{K} by Eq. 10, μ=0.4"
    )
    results: dict[tuple[str, bool], list[list[Fact]]] = {}
    for spec, r in retrievers.items():
        for rerank in (False, True):
            tc = "auto" if rerank else None
            start = time.perf_counter()
            results[(spec, rerank)] = [
                [h.fact for h in r.retrieve(it["question"], kg, K, candidate_ids=ids, time_constraint=tc)]
                for it, ids in cases
            ]
            if not rerank:
                print(f"  {spec:<10} scoring {time.perf_counter() - start:6.1f} s")
    upper = np.mean([any(covers(kg.fact(i), it["answers"]) for i in ids) for it, ids in cases])
    print(f"{'embedder':<12}{'rerank':<8}{'top-15 overlap w/ MiniLM':>26}{'answer coverage@15':>20}")
    for (spec, rerank), tops in results.items():
        ref = results[("minilm", rerank)]
        overlap = np.mean([len(set(a) & set(b)) / K for a, b in zip(tops, ref, strict=True)])
        cov = np.mean(
            [any(covers(f, it["answers"]) for f in top) for top, (it, _) in zip(tops, cases, strict=True)]
        )
        print(f"{spec:<12}{'auto' if rerank else 'none':<8}{overlap:>26.3f}{cov:>20.3f}")
    print(f"  coverage of all candidates (upper bound): {upper:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--candidates", type=int, default=200)
    parser.add_argument("--no-minilm", action="store_true")
    parser.add_argument("--no-hnsw", action="store_true")
    args = parser.parse_args()
    data = shared_data() / "multitq"
    kg_path = data / "kg" / "full_partial.txt"
    rng = np.random.default_rng(0)
    if not kg_path.is_file():
        print(f"MultiTQ data not found at {kg_path}: sections 1, 3, 4 skipped; section 2 on random vectors")
        vecs = rng.standard_normal((N_INDEX, 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        bench_index(vecs, vecs[:200], "random unit vectors", hnsw=not args.no_hnsw)
        return 0
    kg, load_s = timed(lambda: load_multitq_kg(kg_path))
    texts, verb_s = timed(lambda: verbalize_facts(list(kg), kg))
    print(f"MultiTQ KG: {len(kg):,} facts loaded in {load_s:.1f} s, verbalized in {verb_s:.1f} s")
    print(f"  e.g. {texts[0]!r}")
    sample = [texts[i] for i in random.Random(0).sample(range(len(texts)), min(args.sample, len(texts)))]
    embedders = bench_throughput(sample, use_minilm=not args.no_minilm)
    gold = json.loads((data / "questions" / "test_gold_sample.json").read_text())
    questions = [g["question"] for g in gold[:200]]
    if "model2vec" in embedders:
        m2v = embedders["model2vec"]
        vecs, enc_s = timed(lambda: m2v.encode(texts, batch_size=1024))
        rate = len(texts) / enc_s
        print(f"\nmodel2vec embedded all {len(texts):,} facts in {enc_s:.1f} s ({rate:,.0f} facts/s)")
        bench_index(vecs, m2v.encode(questions), "model2vec vectors of the KG", hnsw=not args.no_hnsw)
    rand = rng.standard_normal((len(texts), 384)).astype(np.float32)
    rand /= np.linalg.norm(rand, axis=1, keepdims=True)
    bench_index(
        rand, rand[rng.choice(len(rand), 200, replace=False)], "random unit vectors, dim 384", hnsw=False
    )
    bench_bm25(texts, questions)
    bench_agreement(kg, gold, embedders, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
