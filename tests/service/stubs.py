"""Stubs for the service and browser tests (stdlib only): a run folder as ``tkgqa eval`` writes it
(:func:`make_run`) and a tiny OpenAI-compatible HTTP server (:func:`llm_stub`), whose path picks the
reply: ``/ok/v1`` answers ``Barack Obama`` (12 prompt + 3 completion tokens), ``/fail500/v1`` HTTP 500,
``/fail401/v1`` HTTP 401; ``/slow/v1`` answers after ``SLOW_S`` seconds."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SLOW_S = 3.0


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3},
    }


@contextmanager
def llm_stub() -> Iterator[str]:
    """Serve the stub on a free loopback port; yields its base URL (``http://127.0.0.1:PORT``)."""
    calls: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            calls.append(self.path)
            mode = self.path.strip("/").split("/")[0]
            status, body = 200, _completion("Barack Obama")
            if mode == "fail500":
                status, body = 500, {"error": {"message": "internal server error"}}
            elif mode == "fail401":
                status, body = 401, {"error": {"message": "invalid api key"}}
            elif mode == "slow":
                time.sleep(SLOW_S)
            payload = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def make_run(root: Path, name: str = "mtq_symbolic") -> Path:
    """A small ``tkgqa eval`` output folder: one correct, one wrong, one abstained and one error row."""
    folder = root / name
    folder.mkdir(parents=True)
    report = {
        "n": 4,
        "metrics": {"strict_hits@1": 0.25, "answered": 0.5},
        "errors": 1,
        "method": {"method": "symbolic"},
        "dataset": {"name": "demo"},
        "run_config": {"llm": None},
    }
    (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
    (folder / "report.md").write_text("# symbolic on demo (4 questions)\n", encoding="utf-8")
    (folder / "breakdown.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    fact = {"subject": "Barack_Obama", "relation": "Make_a_visit", "object": "China", "start": "2014-11-10"}
    q1 = "Who visited China in November 2014?"
    rows = [
        {"qid": "1", "question": q1, "predictions": ["Barack Obama"], "gold": ["Barack Obama"],
         "strict_hit": True, "evidence": [fact], "trace": [], "usage": {}, "latency_s": 0.01},
        {"qid": "2", "question": "Who visited Cuba?", "predictions": ["China"], "gold": ["Barack Obama"],
         "strict_hit": False, "evidence": [], "trace": [], "usage": {}},
        {"qid": "3", "question": "Who visited Mars?", "predictions": [], "gold": ["x"], "abstained": True,
         "reason": "no such entity"},
        {"qid": "4", "question": "Who?", "predictions": [], "gold": ["x"], "error": "HTTP 500",
         "error_type": "LLMError"},
    ]  # fmt: skip
    lines = [json.dumps(r) for r in rows] + ['{"qid": "5", "quest']  # a line cut by a crash is skipped
    (folder / "results.jsonl").write_text("\n".join(lines), encoding="utf-8")
    return folder
