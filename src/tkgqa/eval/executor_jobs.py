"""Batch jobs on an executor: embedding a whole KG for dense retrieval (TimeR4, CIK-LLM, ARI memory).

:func:`embed_kg` fills the on-disk embedding cache (:class:`~tkgqa.retrieval.cache.EmbeddingCache`) with a
vector for every fact sentence of a KG and builds the KG's vector index from it, exactly as
:meth:`~tkgqa.retrieval.retriever.Retriever.index` would (same sentences, same cache keys, same index file),
so a later run finds everything ready. Locally the missing sentences are embedded in chunks as the retriever
would (:class:`~tkgqa.retrieval.cache.CachedEmbedder`). With Ray,
the driver verbalises the facts, sends shards of the *missing* sentences to embedding workers (Ray actors
that load the model once) and writes each shard's float16 vectors into the cache as it arrives: only the
driver touches the cache file, so workers on other machines need no shared disk, and an interrupted job
resumes (the sentences already cached are not sent again). The index is then built by the driver.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, assert_never

import numpy as np

from ..errors import TKGQAError
from .executor import LOCAL, ExecutorConfig, ExecutorKind, portable_kg_source
from .ray_session import actor_options, cluster_cpus, ray_session, run_shards

#: Sentences per shard sent to a worker, at most (as many as the local cache fills per chunk).
MAX_SHARD = 4096


@dataclass(frozen=True, slots=True)
class EmbedSummary:
    """What :func:`embed_kg` did: facts in the KG, sentences embedded now (the rest were cached), the
    embedder and index used, the executor, and the time of each phase: ``prepare_s`` (load the KG,
    verbalise, look the cache up), ``embed_s`` (embed the missing sentences into the cache), ``index_s``
    (build and save the index) and ``wall_s`` in all."""

    kg: str
    facts: int
    embedded: int
    cached: int
    embedder: str
    dim: int
    index_kind: str
    fingerprint: str
    executor: str
    workers: int
    prepare_s: float
    embed_s: float
    index_s: float
    wall_s: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class EmbedWorker:
    """A Ray worker holding one embedder (loaded on first use)."""

    def __init__(self, spec: str) -> None:
        self._spec = spec
        self._embedder: Any = None

    def name(self) -> str:
        return str(self._get().name)

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        vecs = self._get().encode(list(texts), batch_size=batch_size, progress=False)
        return np.asarray(vecs, dtype=np.float16)

    def _get(self) -> Any:
        if self._embedder is None:
            from ..retrieval.embedders import resolve_embedder

            self._embedder = resolve_embedder(self._spec)
        return self._embedder


def embed_kg(
    kg: str | Path,
    embedder: str = "hashing",
    *,
    executor: ExecutorConfig = LOCAL,
    index_kind: str = "auto",
    batch_size: int = 64,
    shard_size: int | None = None,
    progress: bool = False,
) -> EmbedSummary:
    """Embed every fact sentence of the KG at ``kg`` (any path ``load_kg`` reads, or ``"demo"``) with
    ``embedder`` into the embedding cache and build its vector index (see the module docstring)."""
    from ..kg.loaders import load_kg
    from ..retrieval.cache import CachedEmbedder, EmbeddingCache, text_key
    from ..retrieval.index import resolve_index_kind
    from ..retrieval.retriever import Retriever

    start = time.perf_counter()
    store = load_kg(portable_kg_source(kg))
    retriever = Retriever(embedder, index_kind=index_kind, progress=progress, batch_size=batch_size)  # type: ignore[arg-type]
    table = retriever.table(store)
    texts = table.texts
    name = retriever.embedder.name
    cache = EmbeddingCache()
    keys = list(dict.fromkeys(text_key(t) for t in texts))
    have = _cached_keys(cache, name, keys)
    missing = list({text_key(t): t for t in texts if text_key(t) not in have}.items())
    prepared = time.perf_counter()
    workers = 1
    match executor.kind:
        case ExecutorKind.LOCAL:
            if missing:  # as the retriever would: in chunks, each committed to the cache
                CachedEmbedder(retriever.embedder, cache).encode(
                    [t for _, t in missing], batch_size=batch_size, progress=progress
                )
        case ExecutorKind.RAY:
            if missing:
                workers = _ray_embed(executor, embedder, name, missing, cache, batch_size, shard_size)
        case _:
            assert_never(executor.kind)
    embedded = time.perf_counter()
    index = retriever.index(store)  # every vector from the cache → the index (persisted for faiss kinds)
    done = time.perf_counter()
    return EmbedSummary(
        kg=str(kg),
        facts=len(table),
        embedded=len(missing),
        cached=len(keys) - len(missing),
        embedder=name,
        dim=index.dim,
        index_kind=resolve_index_kind(index_kind, len(table)),  # type: ignore[arg-type]
        fingerprint=table.fingerprint,
        executor=executor.kind.value,
        workers=workers,
        prepare_s=round(prepared - start, 3),
        embed_s=round(embedded - prepared, 3),
        index_s=round(done - embedded, 3),
        wall_s=round(done - start, 3),
    )


def _cached_keys(cache: Any, model: str, keys: Sequence[bytes]) -> set[bytes]:
    found: set[bytes] = set()
    for i in range(0, len(keys), 50_000):
        found.update(cache.get_many(model, keys[i : i + 50_000]))
    return found


def _ray_embed(
    config: ExecutorConfig,
    spec: str,
    name: str,
    missing: list[tuple[bytes, str]],
    cache: Any,
    batch_size: int,
    shard_size: int | None,
) -> int:
    """Embed ``missing`` on Ray workers, writing each shard into ``cache`` as it arrives; the worker count."""
    with ray_session(config) as (ray, actors):
        workers = config.workers or max(1, int(cluster_cpus(ray)))
        size = shard_size or max(1, min(MAX_SHARD, math.ceil(len(missing) / (workers * 4))))
        workers = max(1, min(workers, math.ceil(len(missing) / size)))
        remote = ray.remote(EmbedWorker).options(**actor_options(ray, workers))
        actors.update({i: remote.remote(spec) for i in range(workers)})
        names = set(ray.get([a.name.remote() for a in actors.values()]))
        if names != {name}:
            raise TKGQAError(
                f"the Ray workers' embedder is {sorted(names)}, not the driver's {name!r}: install the same "
                "model (and version) on every node"
            )
        shards = [missing[i : i + size] for i in range(0, len(missing), size)]
        for shard, vecs in run_shards(
            ray,
            actors,
            shards,
            lambda actor, shard: actor.encode.remote([t for _, t in shard], batch_size),
            in_flight=2,
            lost="some fact shards were not embedded (the Ray workers died); the finished ones are cached — "
            "run the same command again to resume",
        ):
            cache.put_many(name, [k for k, _ in shard], vecs)
        return workers
