"""SQLite response cache, run log, call tagging and usage summaries.

Everything lives in ``$TKGQA_HOME/llm.sqlite`` (``~/.cache/tkgqa`` by default; the variable is read when a
cache is created, never at import). Only requests, responses and counts are stored: never credentials.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from .base import LLMBackend, LLMRequest, LLMResponse, Usage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY, backend TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, kind TEXT NOT NULL DEFAULT 'call',
    method TEXT, question_id TEXT, backend TEXT, model TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL DEFAULT 0, cached INTEGER NOT NULL DEFAULT 0, error TEXT
);
CREATE INDEX IF NOT EXISTS calls_question ON calls (method, question_id);
"""

#: USD per 1M tokens (input, output). Unknown and local models cost 0.
PRICES_PER_MTOK: Mapping[str, tuple[float, float]] = MappingProxyType(
    {
        "gpt-4o-mini": (0.15, 0.60),
        "gpt-4o": (2.50, 10.00),
        "gpt-4.1-nano": (0.10, 0.40),
        "gpt-4.1-mini": (0.40, 1.60),
        "gpt-4.1": (2.00, 8.00),
        "gpt-3.5-turbo": (0.50, 1.50),
    }
)

_CONTEXT: contextvars.ContextVar[Mapping[str, str | None]] = contextvars.ContextVar(
    "tkgqa_llm_context", default=MappingProxyType({})
)


def tkgqa_home() -> Path:
    """``$TKGQA_HOME`` or ``~/.cache/tkgqa`` (read now)."""
    env = os.environ.get("TKGQA_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tkgqa"


def default_cache_path() -> Path:
    return tkgqa_home() / "llm.sqlite"


@contextlib.contextmanager
def llm_context(*, method: str | None = None, question_id: str | None = None) -> Iterator[None]:
    """Tag the LLM calls made inside the block (nests; inner values win)."""
    merged = dict(_CONTEXT.get())
    merged.update({k: v for k, v in {"method": method, "question_id": question_id}.items() if v is not None})
    token = _CONTEXT.set(MappingProxyType(merged))
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def current_llm_context() -> Mapping[str, str | None]:
    return _CONTEXT.get()


def price_for(model: str) -> tuple[float, float]:
    """(input, output) USD per 1M tokens; the longest table entry that prefixes ``model``, else 0."""
    name = model.rsplit(":", 1)[-1].rsplit("/", 1)[-1].lower()
    best = max((k for k in PRICES_PER_MTOK if name.startswith(k)), key=len, default=None)
    return PRICES_PER_MTOK[best] if best else (0.0, 0.0)


class LLMCache:
    """The SQLite file: cached responses and the call log. Safe to share between threads."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        self._ready = False

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if not self._ready:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
            try:
                if not self._ready:
                    conn.executescript(_SCHEMA)
                    self._ready = True
                with conn:
                    yield conn
            finally:
                conn.close()

    def get(self, key: str) -> LLMResponse | None:
        with self._connect() as conn:
            row = conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return LLMResponse.model_validate_json(row[0]) if row else None

    def put(self, key: str, backend: str, request: LLMRequest, response: LLMResponse) -> None:
        req = request.model_dump(mode="json", exclude={"extra"})
        with self._connect() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)",
                (key, backend, json.dumps(req, sort_keys=True), response.model_dump_json(), time.time()),
            )

    def log(self, **row: Any) -> None:
        """Append one row to ``calls`` (columns as in the schema)."""
        row.setdefault("ts", time.time())
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        with self._connect() as conn:
            conn.execute(f"INSERT INTO calls ({cols}) VALUES ({marks})", tuple(row.values()))

    def calls(self, *, method: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM calls"
        args: tuple[str, ...] = ()
        if method is not None:
            sql, args = sql + " WHERE method = ?", (method,)
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            return [dict(r) for r in conn.execute(sql + " ORDER BY id", args)]


class CachedLLM(LLMBackend):
    """Wraps a backend: serves temperature-0 requests from the cache and logs every call."""

    def __init__(
        self,
        backend: LLMBackend,
        *,
        cache: bool = True,
        path: str | os.PathLike[str] | None = None,
        log: bool = True,
    ) -> None:
        self.backend = backend
        self.cache_enabled = cache
        self.log_enabled = log
        self.store = LLMCache(path) if (cache or log) else None
        self.name = backend.name
        self.model_id = backend.model_id

    def cache_namespace(self) -> str:
        return self.backend.cache_namespace()

    def complete(self, request: LLMRequest) -> LLMResponse:
        start = time.perf_counter()
        key = None
        if self.store is not None and self.cache_enabled and request.temperature == 0:
            key = request.cache_key(self.backend.cache_namespace())
            hit = self.store.get(key)
            if hit is not None:
                usage = hit.usage.model_copy(update={"calls": 1, "cached_calls": 1})
                resp = hit.model_copy(
                    update={"cached": True, "usage": usage, "latency_s": time.perf_counter() - start}
                )
                self._log(resp)
                return resp
        try:
            resp = self.backend.complete(request)
        except Exception as exc:
            self._log(None, error=f"{type(exc).__name__}: {exc}"[:500])
            raise
        if key is not None and self.store is not None:
            self.store.put(key, self.backend.cache_namespace(), request, resp)
        self._log(resp)
        return resp

    def record_parse_failure(self) -> None:
        """Log that a response could not be parsed (called by :func:`complete_parsed`)."""
        if self.store is not None and self.log_enabled:
            ctx = current_llm_context()
            self.store.log(
                kind="parse_failure", method=ctx.get("method"), question_id=ctx.get("question_id"),
                backend=self.name, model=self.model_id,
            )  # fmt: skip

    def _log(self, resp: LLMResponse | None, error: str | None = None) -> None:
        if self.store is None or not self.log_enabled:
            return
        ctx = current_llm_context()
        usage = resp.usage if resp is not None else Usage()
        self.store.log(
            method=ctx.get("method"),
            question_id=ctx.get("question_id"),
            backend=self.name,
            model=(resp.model if resp is not None and resp.model else self.model_id),
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            latency_s=resp.latency_s if resp is not None else 0.0,
            cached=int(resp.cached) if resp is not None else 0,
            error=error,
        )

    def __repr__(self) -> str:
        return f"CachedLLM({self.backend!r}, cache={self.cache_enabled})"


class QuestionUsage(BaseModel):
    """Calls, tokens and estimated cost of one (method, question_id)."""

    method: str | None = None
    question_id: str | None = None
    calls: int = 0
    cached_calls: int = 0
    errors: int = 0
    parse_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0


class UsageSummary(BaseModel):
    rows: list[QuestionUsage]
    total: QuestionUsage

    def by_question(self) -> dict[str | None, QuestionUsage]:
        return {r.question_id: r for r in self.rows}


def usage_summary(path: str | os.PathLike[str] | None = None, *, method: str | None = None) -> UsageSummary:
    """Per-(method, question) calls/tokens and cost from the run log. Cached calls cost nothing."""
    rows: dict[tuple[str | None, str | None], QuestionUsage] = {}
    total = QuestionUsage(method=method)
    for call in LLMCache(path).calls(method=method):
        q = rows.setdefault(
            (call["method"], call["question_id"]),
            QuestionUsage(method=call["method"], question_id=call["question_id"]),
        )
        for acc in (q, total):
            _accumulate(acc, call)
    return UsageSummary(rows=list(rows.values()), total=total)


def _accumulate(acc: QuestionUsage, call: Mapping[str, Any]) -> None:
    if call["kind"] == "parse_failure":
        acc.parse_failures += 1
        return
    acc.calls += 1
    acc.errors += call["error"] is not None
    acc.latency_s += call["latency_s"]
    acc.prompt_tokens += call["prompt_tokens"]
    acc.completion_tokens += call["completion_tokens"]
    if call["cached"]:
        acc.cached_calls += 1
        return
    pin, pout = price_for(call["model"] or "")
    acc.cost_usd += (call["prompt_tokens"] * pin + call["completion_tokens"] * pout) / 1e6
