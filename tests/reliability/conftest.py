"""Fixtures for the reliability tests: a stalled LLM backend (in-process) and a stalled HTTP endpoint (a TCP
listener that accepts and never answers, for the openai: backend and subprocess servers)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from extras_marks import skip_without_extra
from tkgqa.errors import LLMError
from tkgqa.llm.base import LLM_BACKENDS, LLMBackend, LLMRequest, LLMResponse


@pytest.fixture
def stalled_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Registers the LLM backend ``stall``: every call blocks until the yielded event is set, then fails."""
    release = threading.Event()

    class Stalled(LLMBackend):
        name = "stall"

        def __init__(self, spec: str | None = None, **_: object) -> None:
            self.model_id = spec or "stall"

        def complete(self, request: LLMRequest) -> LLMResponse:
            release.wait(120)
            raise LLMError("the stalled test LLM was released")

    monkeypatch.setattr(LLM_BACKENDS, "_factories", dict(LLM_BACKENDS._factories))
    monkeypatch.setattr(LLM_BACKENDS, "_order", dict(LLM_BACKENDS._order))
    LLM_BACKENDS.add("stall", Stalled)
    yield release
    release.set()


@pytest.fixture
def stalled_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:PORT``: accepts connections, reads, never replies (until the test ends)."""
    skip_without_extra("llm")
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(128)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    server.close()
