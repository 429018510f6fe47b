from __future__ import annotations

from pathlib import Path

import numpy as np
from retrieval_helpers import CountingEmbedder

from tkgqa.retrieval import CachedEmbedder, EmbeddingCache

TEXTS = [f"fact number {i} on 2014-01-{i % 28 + 1:02d}" for i in range(50)]


def test_second_encode_calls_the_model_zero_times(home: Path, counting: CountingEmbedder) -> None:
    cached = CachedEmbedder(counting)
    first = cached.encode(TEXTS)
    assert counting.texts_seen == 50 and cached.last_encoded == 50
    calls = counting.calls
    second = CachedEmbedder(counting).encode(TEXTS)  # a new wrapper: the cache is on disk
    assert counting.calls == calls
    np.testing.assert_array_equal(first, second)
    assert (home / "embeddings" / "cache.sqlite").is_file()


def test_resume_encodes_only_missing_texts(home: Path, counting: CountingEmbedder) -> None:
    cached = CachedEmbedder(counting, chunk_size=7)
    cached.encode(TEXTS[:20])
    counting.texts_seen = 0
    cached.encode(TEXTS)
    assert counting.texts_seen == 30 and cached.last_encoded == 30


def test_duplicates_encoded_once_and_order_kept(home: Path, counting: CountingEmbedder) -> None:
    cached = CachedEmbedder(counting)
    out = cached.encode(["b", "a", "b", "c"])
    assert counting.texts_seen == 3
    np.testing.assert_array_equal(out[0], out[2])
    assert out.dtype == np.float32 and out.shape == (4, counting.dim)


def test_vectors_round_trip_float16_and_models_are_separate(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    a, b = CountingEmbedder("model-a"), CountingEmbedder("model-b")
    va = CachedEmbedder(a, cache).encode(TEXTS[:5])
    CachedEmbedder(b, cache).encode(TEXTS[:5])
    assert b.texts_seen == 5  # another model name misses the cache
    assert cache.models() == {"model-a": 5, "model-b": 5}
    raw = a.encode(TEXTS[:5])
    np.testing.assert_allclose(va, raw, atol=2e-3)
    np.testing.assert_allclose(np.linalg.norm(va, axis=1), 1.0, rtol=1e-5)
    assert cache.clear("model-a") == 5 and cache.count() == 5


def test_empty_input(home: Path, counting: CountingEmbedder) -> None:
    assert CachedEmbedder(counting).encode([]).shape == (0, counting.dim)
    assert counting.calls == 0
