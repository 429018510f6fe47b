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
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from ..errors import ConfigError
from ..home import tkgqa_home
from ..sqlite_file import SQLiteFile
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


def price_for(model: str, table: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float]:
    """(input, output) USD per 1M tokens; the longest entry of ``table`` (default
    :data:`PRICES_PER_MTOK`) that prefixes ``model``, else 0."""
    prices = PRICES_PER_MTOK if table is None else table
    best = _price_key(model, prices)
    return prices[best] if best is not None else (0.0, 0.0)


def _price_key(model: str, table: Mapping[str, tuple[float, float]]) -> str | None:
    name = model.rsplit(":", 1)[-1].rsplit("/", 1)[-1].lower()
    return max((k for k in table if k and name.startswith(k.lower())), key=len, default=None)


class LLMCache(SQLiteFile):
    """The SQLite file: cached responses and the call log. Safe to share between threads."""

    schema = _SCHEMA

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__(Path(path) if path is not None else default_cache_path())

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

    def calls(self, *, method: str | None = None, since: float | None = None) -> list[dict[str, Any]]:
        """Rows of the run log, oldest first; ``since`` is a Unix time (rows logged at or after it)."""
        where: list[str] = []
        args: list[str | float] = []
        if method is not None:
            where.append("method = ?")
            args.append(method)
        if since is not None:
            where.append("ts >= ?")
            args.append(since)
        sql = "SELECT * FROM calls" + (" WHERE " + " AND ".join(where) if where else "")
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            return [dict(r) for r in conn.execute(sql + " ORDER BY id", tuple(args))]

    def info(self) -> dict[str, Any]:
        """Path, size and row counts of the file (without creating it when it does not exist)."""
        out: dict[str, Any] = {"path": str(self.path), "exists": self.path.exists(), "size_bytes": 0}
        out.update(responses=0, calls=0, first_call=None, last_call=None)
        if not out["exists"]:
            return out
        out["size_bytes"] = self.path.stat().st_size
        with self._connect() as conn:
            out["responses"] = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            n, first, last = conn.execute("SELECT COUNT(*), MIN(ts), MAX(ts) FROM calls").fetchone()
        out.update(calls=n, first_call=first, last_call=last)
        return out

    def clear(self, *, responses: bool = True, log: bool = False) -> dict[str, int]:
        """Delete the cached responses and/or the run log; returns how many rows each lost."""
        removed = {"responses": 0, "calls": 0}
        if not self.path.exists() or not (responses or log):
            return removed
        with self._connect() as conn:
            if responses:
                removed["responses"] = conn.execute("DELETE FROM responses").rowcount
            if log:
                removed["calls"] = conn.execute("DELETE FROM calls").rowcount
        return removed


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


class UsageTotals(BaseModel):
    """Counters summed over run-log rows: calls, cache hits, errors, parse failures, tokens, latency, cost."""

    calls: int = 0
    cached_calls: int = 0
    errors: int = 0
    parse_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0


class QuestionUsage(UsageTotals):
    """Calls, tokens and estimated cost of one (method, question_id)."""

    method: str | None = None
    question_id: str | None = None


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


def _accumulate(
    acc: UsageTotals,
    call: Mapping[str, Any],
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> None:
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
    pin, pout = price_for(call["model"] or "", prices)
    acc.cost_usd += (call["prompt_tokens"] * pin + call["completion_tokens"] * pout) / 1e6


#: Backends that run locally: their calls cost nothing whatever the model is called.
LOCAL_BACKENDS = frozenset({"llamacpp", "fake"})


class GroupUsage(UsageTotals):
    """Calls, tokens, latency and estimated cost of one group of run-log rows (a model, a method)."""

    key: str | None = None


class LogSummary(BaseModel):
    """The run log summed up: overall, per model and per method (``None`` = untagged calls).

    ``unpriced_models`` lists the remote models with uncached calls but no entry in the price table (their
    cost is counted as 0)."""

    total: GroupUsage
    by_model: list[GroupUsage]
    by_method: list[GroupUsage]
    unpriced_models: list[str]


def load_price_table(path: str | os.PathLike[str]) -> dict[str, tuple[float, float]]:
    """Read a JSON price table: ``{"model-prefix": [input, output]}`` or ``{"model-prefix": {"input": x,
    "output": y}}`` in USD per 1M tokens. ConfigError on anything else."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the price table {file}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"the price table {file} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the price table {file} must be a JSON object of model -> [input, output]")
    table: dict[str, tuple[float, float]] = {}
    for model, value in data.items():
        pair = [value.get("input"), value.get("output")] if isinstance(value, dict) else value
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(x, int | float) and not isinstance(x, bool) and x >= 0 for x in pair)
        ):
            raise ConfigError(
                f"bad price for {model!r} in {file}: use [input, output] or {{'input': x, 'output': y}} "
                "(USD per 1M tokens, >= 0)"
            )
        table[str(model).lower()] = (float(pair[0]), float(pair[1]))
    return table


def summarize_log(
    path: str | os.PathLike[str] | None = None,
    *,
    method: str | None = None,
    since: float | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> LogSummary:
    """Sum the run log per model and per method. Cached calls and local backends (:data:`LOCAL_BACKENDS`)
    cost nothing; other models are priced with ``prices`` (default :data:`PRICES_PER_MTOK`)."""
    table = PRICES_PER_MTOK if prices is None else prices
    total = GroupUsage(key=method)
    by_model: dict[str | None, GroupUsage] = {}
    by_method: dict[str | None, GroupUsage] = {}
    unpriced: set[str] = set()
    for call in LLMCache(path).calls(method=method, since=since):
        model = call["model"] or None
        local = call["backend"] in LOCAL_BACKENDS
        row_prices = _FREE if local else table
        billable = not local and not call["cached"] and call["kind"] != "parse_failure"
        if billable and model is not None and _price_key(model, table) is None:
            unpriced.add(model)
        for acc in (
            total,
            by_model.setdefault(model, GroupUsage(key=model)),
            by_method.setdefault(call["method"], GroupUsage(key=call["method"])),
        ):
            _accumulate(acc, call, row_prices)
    return LogSummary(
        total=total,
        by_model=sorted(by_model.values(), key=_by_calls),
        by_method=sorted(by_method.values(), key=_by_calls),
        unpriced_models=sorted(unpriced),
    )


_FREE: Mapping[str, tuple[float, float]] = MappingProxyType({})


def _by_calls(group: GroupUsage) -> tuple[int, str]:
    return (-group.calls, group.key or "")
