"""The embedder behind ARI's similarity (filter top-K, clustering): one instance per process and kind, with
an in-memory memo of the texts it has encoded (candidate actions repeat within and across questions) and,
for the MiniLM encoder (~100-300 short texts/s on two CPU cores), the on-disk embedding cache of
:mod:`tkgqa.retrieval.cache`, so a second run over the same questions encodes nothing."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ...retrieval.embedders import Embedder, FloatMatrix, WrappedEmbedder
from .config import EmbedderName

_LOCK = threading.Lock()
_SHARED: dict[EmbedderName, Embedder] = {}


class MemoEmbedder(WrappedEmbedder):
    """An :class:`Embedder` remembering up to ``max_items`` text vectors (least recently used dropped)."""

    def __init__(self, inner: Embedder, max_items: int = 300_000) -> None:
        super().__init__(inner)
        self.max_items = max_items
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.encoded = 0  # texts sent to the inner embedder

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> FloatMatrix:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            vecs = self.inner.encode(missing, batch_size=batch_size, progress=progress)
            with self._lock:
                self.encoded += len(missing)
                for t, v in zip(missing, vecs, strict=True):
                    self._memo[t] = v
        with self._lock:
            rows = []
            for t in texts:
                self._memo.move_to_end(t)
                rows.append(self._memo[t])
            while len(self._memo) > self.max_items:
                self._memo.popitem(last=False)
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(np.stack(rows), dtype=np.float32)


def shared_embedder(kind: EmbedderName) -> Embedder | None:
    """The process-wide embedder of ``kind`` (``None`` for ``lexical``); raises ConfigError when its extra
    is missing."""
    if kind is EmbedderName.LEXICAL:
        return None
    with _LOCK:
        found = _SHARED.get(kind)
        if found is not None:
            return found
        kind.check_available()
        from ...retrieval.embedders import resolve_embedder

        inner = resolve_embedder(kind.value)
        if kind is EmbedderName.MINILM:
            from ...retrieval.cache import CachedEmbedder

            inner = CachedEmbedder(inner)
        embedder = MemoEmbedder(inner)
        _SHARED[kind] = embedder
        return embedder
