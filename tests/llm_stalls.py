"""Fixtures for the tests of an LLM that does not answer (shared: ``tests/conftest.py`` imports them): a
stalled LLM backend (in-process), a stalled HTTP endpoint (a TCP listener that accepts and never answers, for
the openai: backend and subprocess servers) and a dribbling one (an OpenAI-compatible server sending one byte
a second until told to be healthy)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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


@dataclass
class DribblingLLM:
    """An OpenAI-compatible endpoint on 127.0.0.1 (``url`` ends in ``/v1``): while ``healthy`` is clear it
    sends every reply one byte per ``byte_s`` seconds — status line, headers and body — else at once."""

    url: str
    healthy: threading.Event
    byte_s: float = 1.0
    connections: int = 0


def _reply_bytes(text: str) -> bytes:
    body = json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "model": "dribble",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2},
            "padding": "." * 200,  # at one byte a second: minutes, well past any test's deadline
        }
    ).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


@pytest.fixture
def dribbling_llm() -> Iterator[DribblingLLM]:
    """A :class:`DribblingLLM`. Each connection's loop is bounded (one reply's bytes) and stops itself when
    the client goes away or the test ends."""
    stop = threading.Event()
    state = DribblingLLM(url="", healthy=threading.Event())

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            state.connections += 1
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            payload = _reply_bytes('["Barack Obama"]')
            try:
                if state.healthy.is_set():
                    self.wfile.write(payload)
                    return
                for i in range(len(payload)):
                    self.wfile.write(payload[i : i + 1])
                    self.wfile.flush()
                    if stop.wait(state.byte_s):
                        return
            except OSError:  # the client gave up and closed the connection
                return

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
