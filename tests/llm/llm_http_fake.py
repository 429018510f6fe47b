"""A scripted OpenAI-compatible HTTP server (stdlib only) for the openai: backend tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(text: str, *, prompt_tokens: int = 11, completion_tokens: int = 3, model: str = "m") -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # sent as the body instead of ``json.dumps(body)`` (torn UTF-8, BOM…)
    echo: bool = False  # answer with a completion quoting the request's path and Authorization header


@dataclass
class FakeServer:
    """Answers POSTs with scripted replies in order (the last one repeats); records every request."""

    url: str = ""
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, *replies: Reply) -> None:
        self.replies = list(replies)

    def next_reply(self) -> Reply:
        with self.lock:
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


@contextmanager
def serve() -> Iterator[FakeServer]:
    """Run a :class:`FakeServer` on 127.0.0.1 with a random port, in a thread."""
    state = FakeServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            state.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            reply = state.next_reply()
            if reply.delay:
                time.sleep(reply.delay)
            body = reply.body
            if reply.echo:  # a model that repeats what it was sent: the path, the key
                body = completion(f"['OK'] (called at {self.path} with {self.headers.get('Authorization')})")
            payload = reply.raw if reply.raw is not None else json.dumps(body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
