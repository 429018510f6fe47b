"""Fixtures for the LLM layer tests: an isolated TKGQA_HOME and a scripted local HTTP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_http_fake import FakeServer, serve

from extras_marks import skip_without_extra


@pytest.fixture
def tkgqa_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("TKGQA_HOME", str(home))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return home


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    skip_without_extra("llm")  # every user of the scripted server talks to it through the openai backend
    with serve() as server:
        yield server
