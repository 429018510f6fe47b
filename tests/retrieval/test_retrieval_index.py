from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from retrieval_helpers import random_unit

from tkgqa.retrieval import NumpyIndex, build_index, load_index
from tkgqa.retrieval import index as index_mod


def test_numpy_index_exact_and_padded() -> None:
    data = random_unit(50, 16)
    idx = build_index(data, "numpy")
    scores, ids = idx.search(data[:3], 5)
    assert ids[:, 0].tolist() == [0, 1, 2]
    np.testing.assert_allclose(scores[:, 0], 1.0, rtol=1e-5)
    small = NumpyIndex(16)
    small.add(data[:2])
    s, i = small.search(data[0], 4)
    assert i[0].tolist()[2:] == [-1, -1] and np.isneginf(s[0, 2:]).all()


def test_faiss_flat_equals_brute_force() -> None:
    pytest.importorskip("faiss", reason="faiss-cpu not installed (retrieval extra)")
    data, queries = random_unit(2000, 32, seed=1), random_unit(20, 32, seed=2)
    fs, fi = build_index(data, "flat").search(queries, 15)
    ns, ni = build_index(data, "numpy").search(queries, 15)
    np.testing.assert_array_equal(fi, ni)
    np.testing.assert_allclose(fs, ns, rtol=1e-4, atol=1e-5)


def test_faiss_hnsw_high_recall_and_persistence(tmp_path: Path) -> None:
    pytest.importorskip("faiss", reason="faiss-cpu not installed (retrieval extra)")
    data, queries = random_unit(3000, 32, seed=3), random_unit(30, 32, seed=4)
    hnsw = build_index(data, "hnsw", ef_search=128)
    _, hi = hnsw.search(queries, 10)
    _, ni = build_index(data, "numpy").search(queries, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(hi, ni, strict=True)])
    assert recall > 0.9
    path = tmp_path / "i.faiss"
    hnsw.save(path)
    again = load_index(path, "hnsw", ef_search=128)
    assert len(again) == 3000 and again.kind == "hnsw"
    np.testing.assert_array_equal(again.search(queries, 10)[1], hi)


def test_auto_falls_back_to_numpy_without_faiss(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(index_mod, "faiss_available", lambda: False)
    idx = build_index(random_unit(10, 8), "auto")
    assert idx.kind == "numpy"
    idx.save(tmp_path / "v.npy")
    assert len(load_index(tmp_path / "v.npy", "numpy")) == 10


def test_auto_picks_flat_or_hnsw_by_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_mod, "faiss_available", lambda: True)
    assert index_mod.resolve_index_kind("auto", 10) == "flat"
    assert index_mod.resolve_index_kind("auto", index_mod.HNSW_THRESHOLD + 1) == "hnsw"
