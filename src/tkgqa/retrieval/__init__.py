"""Fact retrieval shared by the TimeR4 and CIK-LLM methods.

* :mod:`.verbalize` — facts → sentences (``Verbalizer``, ``verbalize_fact``).
* :mod:`.embedders` — the ``Embedder`` protocol; ``"minilm"`` (bundled all-MiniLM-L6-v2), ``"model2vec"``
  (static, distilled from it once), ``"hashing"`` (no dependency); ``resolve_embedder``.
* :mod:`.cache` — on-disk float16 embedding cache keyed by (model, sha256(text)); ``CachedEmbedder``.
* :mod:`.index` — ``VectorIndex``: faiss flat / HNSW, numpy fallback; persisted.
* :mod:`.lexical` — ``BM25Retriever`` (bm25s or pure Python) and ``rrf`` fusion.
* :mod:`.temporal` — ``TimeConstraint``, φ_t (TimeR4 Eq. 9 and analogues), ``fuse`` (Eq. 10).
* :mod:`.training` — contrastive time-aware retriever training (TimeR4 §4.4).
* :mod:`.retriever` — the ``Retriever`` facade returning ``ScoredFact``.

Importing this package never imports torch, sentence-transformers, model2vec, faiss or bm25s.
"""

from .cache import CachedEmbedder, EmbeddingCache, text_key
from .embedders import (
    EMBEDDERS,
    Embedder,
    HashingEmbedder,
    Model2VecEmbedder,
    SentenceTransformerEmbedder,
    bundled_minilm_path,
    normalize_rows,
    resolve_embedder,
)
from .index import FaissIndex, NumpyIndex, VectorIndex, build_index, faiss_available, load_index
from .lexical import BM25Retriever, rrf
from .retriever import FactTable, Retriever, ScoredFact
from .temporal import (
    DEFAULT_MU,
    PAPER_PENALTY,
    TimeConstraint,
    fuse,
    parse_time_constraint,
    phi_t,
    time_scores,
)
from .training import (
    ContrastiveConfig,
    NegativeType,
    TrainingExample,
    TrainingReport,
    build_training_examples,
    corrupt_content,
    corrupt_time,
    load_time_aware_embedder,
    make_negatives,
    negative_accuracy,
    train_time_aware_retriever,
)
from .verbalize import DEFAULT_VERBALIZER, Verbalizer, format_time, verbalize_fact, verbalize_facts

__all__ = [
    "DEFAULT_MU",
    "DEFAULT_VERBALIZER",
    "EMBEDDERS",
    "PAPER_PENALTY",
    "BM25Retriever",
    "CachedEmbedder",
    "ContrastiveConfig",
    "Embedder",
    "EmbeddingCache",
    "FactTable",
    "FaissIndex",
    "HashingEmbedder",
    "Model2VecEmbedder",
    "NegativeType",
    "NumpyIndex",
    "Retriever",
    "ScoredFact",
    "SentenceTransformerEmbedder",
    "TimeConstraint",
    "TrainingExample",
    "TrainingReport",
    "VectorIndex",
    "Verbalizer",
    "build_index",
    "build_training_examples",
    "bundled_minilm_path",
    "corrupt_content",
    "corrupt_time",
    "faiss_available",
    "format_time",
    "fuse",
    "load_index",
    "load_time_aware_embedder",
    "make_negatives",
    "negative_accuracy",
    "normalize_rows",
    "parse_time_constraint",
    "phi_t",
    "resolve_embedder",
    "rrf",
    "text_key",
    "time_scores",
    "train_time_aware_retriever",
    "verbalize_fact",
    "verbalize_facts",
]
