"""A mirror of upstream files served on 127.0.0.1 for the ``tkgqa data`` tests (no network): files at
``/OWNER/REPO/COMMIT/PATH``, HTTP Range honoured, a connection cut on demand, every request recorded; and a
test catalogue whose pins are computed from the files it serves."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

REPO = "someone/bench"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Mirror:
    """``files``: URL path (``OWNER/REPO/COMMIT/PATH``) → bytes; ``cut_after``: path → bytes to send before
    closing the connection on the first request for it; ``requests``: (path, Range header) as received."""

    files: dict[str, bytes]
    cut_after: dict[str, int] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    url: str = ""


def _handler(mirror: Mirror) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            path = unquote(self.path.lstrip("/"))
            rng = self.headers.get("Range")
            mirror.requests.append((path, rng))
            data = mirror.files.get(path)
            if data is None:
                self.send_error(404)
                return
            start = int(rng.removeprefix("bytes=").split("-")[0]) if rng else 0
            if start >= len(data) and rng:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.end_headers()
                return
            body = data[start:]
            self.send_response(206 if rng else 200)
            if rng:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            cut = mirror.cut_after.pop(path, None)
            if cut is not None:
                self.wfile.write(body[:cut])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self.wfile.write(body)

    return Handler


@contextmanager
def serve(files: dict[str, bytes], cut_after: dict[str, int] | None = None) -> Iterator[Mirror]:
    mirror = Mirror(dict(files), dict(cut_after or {}))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(mirror))
    mirror.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield mirror
    finally:
        server.shutdown()
        server.server_close()


def entry(
    name: str,
    folder: str,
    files: dict[str, tuple[str, bytes]],
    *,
    datasets: tuple[str, ...] = (),
    convert: list[dict[str, Any]] | None = None,
    manual: dict[str, Any] | None = None,
    known_size: bool = True,
) -> dict[str, Any]:
    """A catalogue entry: ``files`` = dest → (upstream path, bytes), pinned to their blob id (and size)."""
    return {
        "name": name,
        "kind": "dataset",
        "folder": folder,
        "datasets": list(datasets),
        "title": f"test data {name}",
        "holds": "fixture files",
        "paper": "none",
        "licence": "CC0 (test fixture)",
        "files": [
            {
                "dest": dest,
                "source": f"github:{REPO}@{COMMIT}:{upstream}",
                "blob": blob_id(data),
                "size": len(data) if known_size else None,
            }
            for dest, (upstream, data) in files.items()
        ],
        "convert": convert or [],
        **({"manual": manual} if manual else {}),
    }


def served(files: dict[str, tuple[str, bytes]]) -> dict[str, bytes]:
    """The mirror's URL paths for an entry's ``files``."""
    return {f"{REPO}/{COMMIT}/{upstream}": data for upstream, data in files.values()}


def write_catalogue(path: Path, *entries: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"catalogue": 1, "entries": list(entries)}), encoding="utf-8")
    return path
