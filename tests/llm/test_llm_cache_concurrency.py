"""The LLM cache and run log shared by several processes (the Ray executor's workers on one machine): no lost
or torn rows, WAL mode, busy writes retried, and the process-wide call gate."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tkgqa.llm.base import LLMRequest, LLMResponse, Message
from tkgqa.llm.cache import CachedLLM, LLMCache, set_call_gate
from tkgqa.sqlite_file import SQLiteBusyError
from tkgqa.testing import FakeLLM

WRITER = r"""
import sys
from tkgqa.llm.base import LLMRequest, LLMResponse, Message
from tkgqa.llm.cache import LLMCache, llm_context

path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
cache = LLMCache(path)
for i in range(n):
    request = LLMRequest(messages=[{"role": "user", "content": f"{tag}-{i}"}])
    key = request.cache_key("fake")
    cache.put(key, "fake", request, LLMResponse(text=f"{tag}-{i}", model="m"))
    cache.put_request(key, "fake", request)
    with llm_context(method="m", question_id=f"{tag}-{i}"):
        cache.log(method="m", question_id=f"{tag}-{i}", backend="fake", model="m", request_key=key)
"""


def test_two_processes_write_the_same_file_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "llm.sqlite"
    n = 150
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, str(n)], stderr=subprocess.PIPE)
        for tag in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    cache = LLMCache(path)
    info = cache.info()
    assert (info["responses"], info["requests"], info["calls"]) == (2 * n, 2 * n, 2 * n)
    qids = [c["question_id"] for c in cache.calls()]
    assert sorted(qids) == sorted(f"{t}-{i}" for t in "ab" for i in range(n))
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def test_several_processes_creating_a_new_file_at_once_all_succeed(tmp_path: Path) -> None:
    """Switching a new file to WAL needs an exclusive lock; SQLite answers a process racing it with "locked"
    at once (no busy wait), so the first open of each process retries its idempotent setup."""
    for round_ in range(3):
        path = tmp_path / f"new-{round_}.sqlite"
        procs = [
            subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, "5"], stderr=subprocess.PIPE)
            for tag in "abcd"
        ]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err.decode()
        assert LLMCache(path).info()["responses"] == 20


def test_a_write_waits_for_another_process_lock_then_succeeds(tmp_path: Path) -> None:
    path = tmp_path / "llm.sqlite"
    cache = LLMCache(path)
    cache.info()  # creates and migrates the file
    cache.log(method="m", question_id="first")
    holder = sqlite3.connect(path, timeout=1, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process's writer holds the lock for a while
    released = threading.Timer(0.6, holder.commit)
    released.start()
    start = time.perf_counter()
    cache.log(method="m", question_id="second")
    waited = time.perf_counter() - start
    released.join()
    holder.close()
    assert waited >= 0.4
    assert [c["question_id"] for c in cache.calls()] == ["first", "second"]


def test_a_lock_held_past_timeout_and_retries_is_a_busy_error(tmp_path: Path) -> None:
    path = tmp_path / "llm.sqlite"
    cache = LLMCache(path)
    cache.info()
    cache.log(method="m", question_id="x")
    cache.timeout, cache.retries = 0.05, 1
    holder = sqlite3.connect(path)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(SQLiteBusyError, match="busy"):
            cache.log(method="m", question_id="y")
    finally:
        holder.rollback()
        holder.close()
    assert [c["question_id"] for c in cache.calls()] == ["x"]  # nothing half-written


class _CountingGate:
    def __init__(self) -> None:
        self.entered = 0
        self.active = 0
        self.peak = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            self.entered += 1
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            yield
        finally:
            with self._lock:
                self.active -= 1


def test_call_gate_wraps_backend_calls_but_not_cache_hits(tmp_path: Path) -> None:
    gate = _CountingGate()
    llm = CachedLLM(FakeLLM(), path=tmp_path / "llm.sqlite")
    request = LLMRequest(messages=(Message(role="user", content="hello"),), temperature=0)
    previous = set_call_gate(gate)
    try:
        first = llm.complete(request)
        second = llm.complete(request)
    finally:
        set_call_gate(previous)
    assert not first.cached and second.cached
    assert gate.entered == 1 and gate.active == 0
    assert isinstance(first, LLMResponse)
