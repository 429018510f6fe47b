"""Where retrieval keeps its files: ``$TKGQA_HOME`` (read at call time, ``~/.cache/tkgqa`` by default)."""

from __future__ import annotations

import os
from pathlib import Path


def tkgqa_home() -> Path:
    """``$TKGQA_HOME`` or ``~/.cache/tkgqa`` (read now, never at import)."""
    env = os.environ.get("TKGQA_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tkgqa"


def embeddings_dir() -> Path:
    """Embedding cache (``cache.sqlite``) and persisted vector indexes (``indexes/``)."""
    return tkgqa_home() / "embeddings"


def models_dir() -> Path:
    """Locally built models: distilled model2vec, fine-tuned retrievers."""
    return tkgqa_home() / "models"


def safe_name(name: str) -> str:
    """A model or KG name usable as a file name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
