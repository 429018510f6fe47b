"""Fixtures for the dataset tests: an isolated ``$TKGQA_HOME`` and the shared benchmark data (if present)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def find_shared_data() -> Path | None:
    """``$TKGQA_SHARED_DATA``, else ``<repo>/../shared/data``; ``None`` when absent."""
    env = os.environ.get("TKGQA_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "tkgqa_home"))


@pytest.fixture
def shared_data() -> Path:
    path = find_shared_data()
    if path is None:
        pytest.skip("shared benchmark data not found (set TKGQA_SHARED_DATA or place it at ../shared/data)")
    return path
