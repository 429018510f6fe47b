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


def artifacts() -> Path:
    folder = Path(os.environ.get(ARTIFACTS_ENV) or "out/ui-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shoot(page: Any, name: str) -> None:
    """A full-page screenshot of ``page`` saved as ``$TKGQA_UI_ARTIFACTS/<name>.png`` (not committed)."""
    page.screenshot(path=str(artifacts() / f"{name}.png"), full_page=True)
