"""Running the app with uvicorn: :func:`make_server` (what ``tkgqa serve`` runs) and :func:`serve_in_thread`
(a loopback server on a free port, for tests and ``bench/service_load.py``).

Stopping is quick: on SIGTERM/SIGINT the server stops accepting, cancels every queued question (their
requests get 503 at once, requests waiting on a running one within
:data:`~tkgqa.service.submit.POLL_S`), then
waits at most ``shutdown_timeout_s`` for the rest before cancelling them. Method threads are daemons, so an
LLM call that is still stalled does not keep the process alive.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI

from .guard import check_binding, is_loopback

__all__ = ["Server", "check_binding", "is_loopback", "make_server", "serve_in_thread"]


class Server(uvicorn.Server):
    """uvicorn's server, which on shutdown first cancels the app's queued questions."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        app: Any = self.config.app
        state = getattr(getattr(app, "state", None), "tkgqa", None)
        if state is not None:
            state.pool.close()
        await super().shutdown(sockets)


def make_server(
    app: FastAPI, host: str = "127.0.0.1", port: int = 8000, *, log_level: str = "info"
) -> Server:
    """A :class:`Server` for ``app`` with the graceful-shutdown limit of its settings."""
    settings = app.state.tkgqa.settings
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level.lower(),
        timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout_s)),
        lifespan="on",
    )
    return Server(config)


@contextmanager
def serve_in_thread(
    app: FastAPI, *, log_level: str = "warning", start_timeout_s: float = 30.0
) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 and a free port in a daemon thread; yields the base URL and stops the
    server (gracefully) on exit."""
    server = make_server(app, "127.0.0.1", 0, log_level=log_level)
    thread = threading.Thread(target=server.run, name="tkgqa-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the loopback test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
