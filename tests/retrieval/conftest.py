"""Fixtures for the retrieval tests: an isolated ``$TKGQA_HOME``, a toy KG and a counting embedder."""

from __future__ import annotations

from pathlib import Path

import pytest
from retrieval_helpers import CountingEmbedder, toy_facts

from tkgqa.kg import TemporalKG


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def counting() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def toy_kg() -> TemporalKG:
    return TemporalKG(toy_facts(), name="toy")
