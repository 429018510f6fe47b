"""A dribbling or stuck LLM (issue #23, item 1), on 127.0.0.1 only: ``--llm-timeout`` is one total deadline
per attempt (connect, send, every byte), so a server sending one byte a second ends ``tkgqa ask`` with an
LLM error on time; in ``tkgqa serve`` such a call is a 502 and the next question is answered once the LLM is
healthy; and a method worker stuck for good is replaced by the watchdog (reported by ``/health``) so later
questions of that method are answered."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tkgqa.llm.base import LLM_BACKENDS, LLMBackend, LLMRequest, LLMResponse

pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
pytest.importorskip("uvicorn", reason="the loopback tests need uvicorn: install tkgqa[service]")

from tkgqa.service import create_app
from tkgqa.service.policy import ServiceSettings
from tkgqa.service.server import serve_in_thread

QUESTION = "Who visited China in November 2014?"


def _post(url: str, path: str, body: dict[str, Any], timeout: float = 60) -> tuple[int, dict[str, Any]]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        res = conn.getresponse()
        return res.status, json.loads(res.read())
    finally:
        conn.close()


def _get(url: str, path: str) -> dict[str, Any]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", path)
        return dict(json.loads(conn.getresponse().read()))
    finally:
        conn.close()


def test_ask_against_a_dribbling_llm_ends_with_an_llm_error_on_time(
    dribbling_llm: Any, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "OPENAI_BASE_URL": dribbling_llm.url,
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
        "TKGQA_HOME": str(tmp_path / "home"),
    }
    cmd = [sys.executable, "-m", "tkgqa", "ask", QUESTION, "--method", "llm_only", "--llm", "openai:m"]
    cmd += ["--llm-timeout", "2", "--llm-retries", "0"]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("tkgqa ask against a server sending one byte a second ran past 120 s (the 2 s deadline)")
    elapsed = time.monotonic() - started
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "within 2 s" in proc.stderr, proc.stderr[-2000:]
    assert dribbling_llm.connections == 1
    # the behaviour under test is a deadline: 2 s plus interpreter start-up, with a wide margin
    assert elapsed < 60, f"took {elapsed:.1f} s"


@pytest.fixture
def openai_env(dribbling_llm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_BASE_URL", dribbling_llm.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TKGQA_LLM_TIMEOUT", "2")
    monkeypatch.setenv("TKGQA_LLM_RETRIES", "0")
    dribbling_llm.byte_s = 0.5  # a byte well within each read's timeout: only a total deadline stops it
    return dribbling_llm


def test_serve_answers_502_for_a_dribbling_llm_and_the_next_question_once_it_is_healthy(
    openai_env: Any,
) -> None:
    settings = ServiceSettings(allow_llms=("fake", "openai:m"), request_timeout_s=20)
    ask = {"question": QUESTION, "method": "llm_only", "llm": "openai:m"}
    with serve_in_thread(create_app(settings=settings)) as url:
        status, body = _post(url, "/api/ask", ask)
        assert status == 502 and body["type"] == "LLMError", body
        assert "within 2 s" in body["error"]
        openai_env.healthy.set()
        status, body = _post(url, "/api/ask", ask)
        assert status == 200 and body["answers"] == ["Barack Obama"], body
        health = _get(url, "/health")
    assert health["status"] == "ok" and health["pending"] == 0 and health["stuck_workers"] == 0


@pytest.fixture
def stuck_once(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Registers the LLM backend ``stuck_once``: its first call never returns (until the yielded event is
    set at the end of the test), every later call answers at once."""
    release = threading.Event()
    calls: list[int] = []

    class StuckOnce(LLMBackend):
        name = "stuck_once"

        def __init__(self, spec: str | None = None, **_: object) -> None:
            self.model_id = spec or "stuck_once"

        def complete(self, request: LLMRequest) -> LLMResponse:
            calls.append(1)
            if len(calls) == 1:
                release.wait(120)
            return LLMResponse(text='["Barack Obama"]', model=self.model_id)

    monkeypatch.setattr(LLM_BACKENDS, "_factories", dict(LLM_BACKENDS._factories))
    monkeypatch.setattr(LLM_BACKENDS, "_order", dict(LLM_BACKENDS._order))
    LLM_BACKENDS.add("stuck_once", StuckOnce)
    yield release
    release.set()


def test_a_stuck_method_worker_is_replaced_and_health_reports_it(
    stuck_once: threading.Event, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    settings = ServiceSettings(allow_llms=("fake", "stuck_once"), request_timeout_s=1)
    ask = {"question": QUESTION, "method": "llm_only", "llm": "stuck_once"}
    with serve_in_thread(create_app(settings=settings)) as url:
        status, body = _post(url, "/api/ask", ask)
        assert status == 504 and body["type"] == "Timeout", body
        deadline = time.monotonic() + 30
        while (health := _get(url, "/health")).get("stuck_workers") != 1:
            assert time.monotonic() < deadline, f"the stuck worker was never replaced: {health}"
            time.sleep(0.1)
        assert health["status"] == "degraded" and health["replaced_workers"] == 1 and health["pending"] == 0
        status, body = _post(url, "/api/ask", ask)  # the same method, LLM and options: the same slot
        assert status == 200 and body["answers"] == ["Barack Obama"], body
        stuck_once.set()  # the stuck call returns: its thread ends and the server is healthy again
        while (health := _get(url, "/health"))["stuck_workers"] != 0:
            assert time.monotonic() < deadline, f"the released worker was never counted back: {health}"
            time.sleep(0.1)
        assert health["status"] == "ok" and health["replaced_workers"] == 1
        status, body = _post(url, "/api/ask", ask)
        assert status == 200 and body["answers"] == ["Barack Obama"], body
