"""On-disk embedding cache: a KG is embedded once per model.

Rows live in ``$TKGQA_HOME/embeddings/cache.sqlite`` keyed by ``(model name, sha256(text))`` with the vector
as a float16 blob (384 dims → 768 bytes; 227k MultiTQ facts ≈ 190 MB). :class:`CachedEmbedder` wraps any
:class:`Embedder`: it looks texts up, encodes only the missing ones in chunks (with a tqdm progress bar) and
commits each chunk, so an interrupted run resumes where it stopped. Every vector it returns has gone
through float16, so cached and freshly computed results are identical.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..sqlite_file import SQLiteFile
from .embedders import Embedder, FloatMatrix, WrappedEmbedder, normalize_rows
from .paths import embeddings_dir

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL, key BLOB NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY (model, key)
) WITHOUT ROWID;
"""
_LOOKUP_CHUNK = 900


def text_key(text: str) -> bytes:
    """sha256 digest of the text (32 bytes)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache(SQLiteFile):
    """SQLite store of float16 vectors keyed by (model, sha256(text)). Safe to share between threads."""

    schema = _SCHEMA
    timeout = 60.0
    wal = True

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__(Path(path) if path is not None else embeddings_dir() / "cache.sqlite")

    def get_many(self, model: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Cached vectors (float16) of those ``keys`` that are present."""
        found: dict[bytes, np.ndarray] = {}
        with self._connect() as conn:
            for start in range(0, len(keys), _LOOKUP_CHUNK):
                chunk = list(keys[start : start + _LOOKUP_CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, vec FROM embeddings WHERE model = ? AND key IN ({marks})", [model, *chunk]
                )
                for key, blob in rows:
                    found[bytes(key)] = np.frombuffer(blob, dtype=np.float16)
        return found

    def put_many(self, model: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        vecs = np.asarray(vectors, dtype=np.float16)
        with self._connect() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model, key, dim, vec) VALUES (?, ?, ?, ?)",
                [(model, k, vecs.shape[1], v.tobytes()) for k, v in zip(keys, vecs, strict=True)],
            )

    def count(self, model: str | None = None) -> int:
        with self._connect() as conn:
            if model is None:
                return int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
            return int(
                conn.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0]
            )

    def models(self) -> dict[str, int]:
        with self._connect() as conn:
            rows = conn.execute("SELECT model, COUNT(*) FROM embeddings GROUP BY model").fetchall()
        return {str(m): int(n) for m, n in rows}

    def clear(self, model: str | None = None) -> int:
        with self._connect() as conn:
            if model is None:
                return conn.execute("DELETE FROM embeddings").rowcount
            return conn.execute("DELETE FROM embeddings WHERE model = ?", (model,)).rowcount


#: From this many texts to encode, an embedding job prints its estimated time and shows a progress bar.
LARGE_JOB = 20_000


def _say_estimate(name: str, total: int, done: int, seconds: float) -> None:
    """One line on stderr after the first chunk of a large job: how long the rest will take here."""
    rate = done / max(seconds, 1e-6)
    minutes = (total - done) / rate / 60
    faster = "" if name.startswith(("model2vec", "hashing")) else "; --embedder model2vec is much faster"
    sys.stderr.write(
        f"embedding {total:,} texts with {name}: about {minutes:.0f} more min at {rate:.0f} texts/s on this "
        f"machine (stored in the embedding cache: later runs reuse them{faster})\n"
    )
    sys.stderr.flush()


class CachedEmbedder(WrappedEmbedder):
    """An :class:`Embedder` that reads and fills an :class:`EmbeddingCache` (same ``name`` and ``dim``)."""

    def __init__(
        self, embedder: Embedder, cache: EmbeddingCache | None = None, *, chunk_size: int = 4096
    ) -> None:
        super().__init__(embedder)
        self.cache = cache if cache is not None else EmbeddingCache()
        self.chunk_size = chunk_size
        self.last_encoded = 0  # texts sent to the model by the latest ``encode`` call

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> FloatMatrix:
        if not len(texts):
            self.last_encoded = 0
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        found = self.cache.get_many(self.name, list(dict.fromkeys(keys)))
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in missing:
                missing[key] = text
        self.last_encoded = len(missing)
        if missing:
            self._fill(missing, found, batch_size, progress)
        out = np.stack([found[k] for k in keys]).astype(np.float32)
        return normalize_rows(out)

    def _fill(
        self, missing: dict[bytes, str], found: dict[bytes, np.ndarray], batch_size: int, progress: bool
    ) -> None:
        items = list(missing.items())
        bar = None
        large = len(items) >= LARGE_JOB
        if progress or large:  # a large job always shows its progress on a terminal
            from tqdm.auto import tqdm

            desc = f"embedding ({self.name})"
            bar = tqdm(total=len(items), desc=desc, unit="text", disable=None if large else False)
        try:
            for start in range(0, len(items), self.chunk_size):
                chunk = items[start : start + self.chunk_size]
                began = time.perf_counter()
                vecs = self.inner.encode([t for _, t in chunk], batch_size=batch_size, progress=False)
                if start == 0 and large:
                    _say_estimate(self.name, len(items), len(chunk), time.perf_counter() - began)
                half = np.asarray(vecs, dtype=np.float16)
                chunk_keys = [k for k, _ in chunk]
                self.cache.put_many(self.name, chunk_keys, half)
                found.update(zip(chunk_keys, half, strict=True))
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
