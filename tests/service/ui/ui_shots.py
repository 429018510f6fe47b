"""Helpers the browser tests import (a module of its own: ``conftest`` is not importable by name when several
test folders are collected together)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ARTIFACTS_ENV = "TKGQA_UI_ARTIFACTS"

#: The offline ARI preset the browser tests ask for, with the hashing embedder (MiniLM would load for ~60 s
#: on a busy machine); the browser tests exercise the preset mechanism, not the embedder.
PRESET = "ari:policy=symbolic,embedder=hashing"


#: Where screenshots go unless ``$TKGQA_UI_ARTIFACTS`` says: ``ui-screenshots`` under pytest's base temporary
#: folder (set by the ``conftest``; never inside the repository).
DEFAULT_FOLDER: list[Path] = []


def artifacts() -> Path:
    chosen = os.environ.get(ARTIFACTS_ENV)
    if chosen:
        folder = Path(chosen)
    elif DEFAULT_FOLDER:
        folder = DEFAULT_FOLDER[0]
    else:
        import tempfile

        folder = Path(tempfile.gettempdir()) / "tkgqa-ui-screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shoot(page: Any, name: str) -> Path:
    """A full-page screenshot of ``page`` saved as ``<name>.png`` under :func:`artifacts` (not committed)."""
    path = artifacts() / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
