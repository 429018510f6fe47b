"""Nearest-neighbour search over normalised vectors (inner product = cosine, TimeR4 Eq. 3–4).

:class:`FaissIndex` wraps ``faiss-cpu``: exact ``flat`` inner product, or ``hnsw`` (graph, approximate) for
large KGs. :class:`NumpyIndex` is the brute-force fallback when faiss is absent; both satisfy
:class:`VectorIndex` and return ``(scores, ids)`` of shape ``(n_queries, k)``, best first, padded with id
``-1`` / score ``-inf`` when fewer than ``k`` vectors exist. Indexes are persisted with :meth:`save` /
:func:`load_index` (the retriever puts them in ``$TKGQA_HOME/embeddings/indexes/``).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, DataError

IndexKind = Literal["auto", "flat", "hnsw", "numpy"]
#: Above this many vectors ``kind="auto"`` builds HNSW. Measured (bench/retrieval.py, 2 cores): flat top-15 on
#: MultiTQ's 227k model2vec vectors (dim 256) takes 10–30 ms per query, HNSW (m=32, ef_search=256) ~0.5 ms at
#: recall@15 ≈ 0.95, after a one-off ~1 min build (persisted).
HNSW_THRESHOLD = 100_000
IndexHits = tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]


@runtime_checkable
class VectorIndex(Protocol):
    kind: str

    @property
    def dim(self) -> int: ...

    def __len__(self) -> int: ...

    def add(self, vectors: npt.ArrayLike) -> None: ...

    def search(self, queries: npt.ArrayLike, k: int) -> IndexHits: ...

    def save(self, path: str | os.PathLike[str]) -> None: ...


def faiss_available() -> bool:
    return importlib.util.find_spec("faiss") is not None


def _as_matrix(x: npt.ArrayLike, dim: int | None = None) -> npt.NDArray[np.float32]:
    arr = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or (dim is not None and arr.shape[1] != dim):
        raise DataError(f"expected vectors of shape (n, {dim}), got {arr.shape}")
    return arr


class NumpyIndex:
    """Exact inner-product search with numpy (``argpartition`` per query)."""

    kind = "numpy"

    def __init__(self, dim: int) -> None:
        self._dim = dim
        self._vectors = np.zeros((0, dim), dtype=np.float32)

    @property
    def dim(self) -> int:
        return self._dim

    def __len__(self) -> int:
        return len(self._vectors)

    def add(self, vectors: npt.ArrayLike) -> None:
        self._vectors = np.concatenate([self._vectors, _as_matrix(vectors, self._dim)])

    def search(self, queries: npt.ArrayLike, k: int) -> IndexHits:
        q = _as_matrix(queries, self._dim)
        n = len(self._vectors)
        scores = np.full((len(q), k), -np.inf, dtype=np.float32)
        ids = np.full((len(q), k), -1, dtype=np.int64)
        if n == 0 or k <= 0:
            return scores, ids
        sims = q @ self._vectors.T
        kk = min(k, n)
        for row, s in enumerate(sims):
            top = np.argpartition(-s, kk - 1)[:kk] if kk < n else np.arange(n)
            top = top[np.lexsort((top, -s[top]))]  # score desc, id asc on ties
            scores[row, :kk] = s[top]
            ids[row, :kk] = top
        return scores, ids

    def save(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "wb") as fh:  # np.save would append ".npy" to a name without it
            np.save(fh, self._vectors)


class FaissIndex:
    """faiss inner-product index: ``flat`` (exact) or ``hnsw`` (``m`` links, ``ef_search`` beam)."""

    def __init__(
        self,
        dim: int,
        kind: Literal["flat", "hnsw"] = "flat",
        *,
        m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 256,
        index: Any = None,
    ) -> None:
        try:
            import faiss
        except ImportError:
            raise ConfigError("faiss is not installed; pip install faiss-cpu (or use kind='numpy')") from None
        self._faiss = faiss
        self.kind: str = kind
        if index is None:
            if kind == "flat":
                index = faiss.IndexFlatIP(dim)
            elif kind == "hnsw":
                index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
                index.hnsw.efConstruction = ef_construction
            else:
                raise ConfigError(f"unknown faiss index kind {kind!r}; use flat or hnsw")
        if kind == "hnsw":
            index.hnsw.efSearch = ef_search
        self.index = index

    @property
    def dim(self) -> int:
        return int(self.index.d)

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def add(self, vectors: npt.ArrayLike) -> None:
        self.index.add(_as_matrix(vectors, self.dim))

    def search(self, queries: npt.ArrayLike, k: int) -> IndexHits:
        q = _as_matrix(queries, self.dim)
        if k <= 0:
            return np.zeros((len(q), 0), dtype=np.float32), np.zeros((len(q), 0), dtype=np.int64)
        scores, ids = self.index.search(q, k)
        ids = np.asarray(ids, dtype=np.int64)
        scores = np.where(ids < 0, -np.inf, scores).astype(np.float32)
        return scores, ids

    def save(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        self._faiss.write_index(self.index, str(tmp))
        tmp.replace(p)


def resolve_index_kind(kind: IndexKind, n_vectors: int) -> str:
    """``auto`` → ``numpy`` without faiss, ``hnsw`` above :data:`HNSW_THRESHOLD` vectors, else ``flat``."""
    if kind != "auto":
        return kind
    if not faiss_available():
        return "numpy"
    return "hnsw" if n_vectors > HNSW_THRESHOLD else "flat"


def build_index(vectors: npt.ArrayLike, kind: IndexKind = "auto", **options: Any) -> VectorIndex:
    """An index holding ``vectors`` (ids = row numbers); ``kind`` as in :func:`resolve_index_kind`."""
    mat = _as_matrix(vectors)
    kind = resolve_index_kind(kind, len(mat))  # type: ignore[assignment]
    index: VectorIndex
    if kind == "numpy":
        index = NumpyIndex(mat.shape[1])
    elif kind in ("flat", "hnsw"):
        index = FaissIndex(mat.shape[1], kind, **options)
    else:
        raise ConfigError(f"unknown index kind {kind!r}; use auto, flat, hnsw or numpy")
    index.add(mat)
    return index


def load_index(path: str | os.PathLike[str], kind: str, **options: Any) -> VectorIndex:
    """Load what :meth:`VectorIndex.save` wrote (``kind`` as the index reported it)."""
    p = Path(path)
    if not p.is_file():
        raise DataError("no saved index here", path=str(p))
    if kind == "numpy":
        vectors = np.load(p)
        index = NumpyIndex(vectors.shape[1])
        index.add(vectors)
        return index
    if kind not in ("flat", "hnsw"):
        raise ConfigError(f"unknown index kind {kind!r}")
    import faiss

    raw = faiss.read_index(str(p))
    return FaissIndex(int(raw.d), kind, index=raw, **options)  # type: ignore[arg-type]
