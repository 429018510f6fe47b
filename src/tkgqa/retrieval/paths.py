"""Where retrieval keeps its files: ``$TKGQA_HOME`` (read at call time, ``~/.cache/tkgqa`` by default)."""

from __future__ import annotations

from pathlib import Path

from ..home import tkgqa_home


def embeddings_dir() -> Path:
    """Embedding cache (``cache.sqlite``) and persisted vector indexes (``indexes/``)."""
    return tkgqa_home() / "embeddings"


def models_dir() -> Path:
    """Locally built models: distilled model2vec, fine-tuned retrievers."""
    return tkgqa_home() / "models"


def safe_name(name: str) -> str:
    """A model or KG name usable as a file name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
