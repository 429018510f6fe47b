"""SQLite response cache, run log and call tagging.

Everything lives in ``$TKGQA_HOME/llm.sqlite`` (``~/.cache/tkgqa`` by default; the variable is read when a
cache is created, never at import); :mod:`tkgqa.llm.schema` versions and migrates the file. Only requests
(without credentials, see :data:`~tkgqa.credentials.SECRET_FIELDS`), responses and counts are stored, with
credential-shaped text masked (:func:`~tkgqa.credentials.redact_text`: a key a model echoed).
Summaries of the log are in :mod:`tkgqa.llm.summary`, prices in :mod:`tkgqa.llm.pricing`.

Several processes may share the file (the workers of ``tkgqa eval --executor ray`` on one machine): it is in
WAL mode and every write is one ``BEGIN IMMEDIATE`` transaction retried while another process holds the lock
(:class:`~tkgqa.sqlite_file.SQLiteFile`), so no cached response or log row is lost or torn.

:func:`set_call_gate` installs a process-wide limit on the calls that reach a backend (cache hits pass
freely): the Ray executor installs a semaphore shared by all its workers, which bounds LLM concurrency over
the whole cluster.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..credentials import redact, redact_text
from ..errors import ConfigError, LLMError, ParseError
from ..home import tkgqa_home
from ..sqlite_file import SQLiteFile
from ..usage import Usage
from .base import LLM_BACKENDS, LLMBackend, LLMRequest, LLMResponse
from .schema import migrate, schema_version

_CONTEXT: contextvars.ContextVar[Mapping[str, str | None]] = contextvars.ContextVar(
    "tkgqa_llm_context", default=MappingProxyType({})
)


#: A process-wide gate around each backend call (cache misses only): ``None`` or a zero-argument callable
#: returning a context manager that holds one slot of a shared limit while the call runs.
CallGate = Callable[[], AbstractContextManager[object]]
_GATE: CallGate | None = None


def set_call_gate(gate: CallGate | None) -> CallGate | None:
    """Install ``gate`` around every backend call of this process (``None`` removes it); returns the gate it
    replaced. Used by the Ray executor to share one LLM concurrency limit between its workers."""
    global _GATE
    previous, _GATE = _GATE, gate
    return previous


def _call_slot() -> AbstractContextManager[object]:
    gate = _GATE
    return gate() if gate is not None else contextlib.nullcontext()


def default_cache_path() -> Path:
    return tkgqa_home() / "llm.sqlite"


@contextlib.contextmanager
def llm_context(
    *, method: str | None = None, question_id: str | None = None, stage: str | None = None
) -> Iterator[None]:
    """Tag the LLM calls made inside the block (nests; inner values win). ``stage`` names the prompt task
    of a multi-stage method (TimeR4's ``rewrite`` and ``answer``): the run log records it and the
    ``replay:`` backend matches recorded replies by question id and stage."""
    merged = dict(_CONTEXT.get())
    tags = {"method": method, "question_id": question_id, "stage": stage}
    merged.update({k: v for k, v in tags.items() if v is not None})
    token = _CONTEXT.set(MappingProxyType(merged))
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def current_llm_context() -> Mapping[str, str | None]:
    return _CONTEXT.get()


def _request_json(request: LLMRequest) -> str:
    """The request as stored in the file: no credentials, credential-shaped text masked (:func:`redact`)."""
    return json.dumps(redact(request.stored()), sort_keys=True, ensure_ascii=False)


class LLMCache(SQLiteFile):
    """The SQLite file: cached responses, stored requests and the call log. Safe to share between threads.

    The file is migrated to the current schema the first time this object opens it. Safe to share between
    processes too (WAL; writes are retried while another process holds the lock)."""

    wal = True

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__(Path(path) if path is not None else default_cache_path())
        self._migrated = False

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with super()._connect() as conn:  # holds the lock: the check below is not raced
            if not self._migrated:
                migrate(conn, self.path)
                self._migrated = True
            yield conn

    def schema_version(self) -> int:
        with self._connect() as conn:
            return schema_version(conn)

    # --- cache ------------------------------------------------------------------------------------------
    def get(self, key: str) -> LLMResponse | None:
        with self._connect() as conn:
            row = conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return LLMResponse.model_validate_json(row[0]) if row else None

    def put(self, key: str, backend: str, request: LLMRequest, response: LLMResponse) -> None:
        stored = response.model_copy(update={"text": redact_text(response.text)})  # a key a model echoed
        values = (key, backend, _request_json(request), stored.model_dump_json(), time.time())
        self._write(
            lambda conn: conn.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)", values)
        )

    # --- run log ----------------------------------------------------------------------------------------
    def put_request(self, key: str, backend: str, request: LLMRequest) -> None:
        """Store ``request`` (no credentials) under ``key`` for the run log; kept once per key."""
        values = (key, backend, _request_json(request), time.time())
        self._write(lambda conn: conn.execute("INSERT OR IGNORE INTO requests VALUES (?, ?, ?, ?)", values))

    def request(self, key: str) -> dict[str, Any] | None:
        """The stored request of ``key`` (``backend`` namespace + ``request`` data), or ``None``."""
        with self._connect() as conn:
            row = conn.execute("SELECT backend, request FROM requests WHERE key = ?", (key,)).fetchone()
            if row is None:
                row = conn.execute("SELECT backend, request FROM responses WHERE key = ?", (key,)).fetchone()
        return {"backend": row[0], "request": json.loads(row[1])} if row else None

    def log(self, **row: Any) -> None:
        """Append one row to ``calls`` (columns as in :mod:`tkgqa.llm.schema`); credential-shaped text in
        its strings (a reply, an error quoting a URL) is masked (:func:`redact_text`)."""
        row = {k: redact_text(v) if isinstance(v, str) else v for k, v in row.items()}
        row.setdefault("ts", time.time())
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        values = tuple(row.values())
        self._write(lambda conn: conn.execute(f"INSERT INTO calls ({cols}) VALUES ({marks})", values))

    def calls(
        self, *, method: str | None = None, since: float | None = None, question_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Rows of the run log, oldest first; ``since`` is a Unix time (rows logged at or after it)."""
        where: list[str] = []
        args: list[str | float] = []
        for column, op, value in (
            ("method", "=", method),
            ("ts", ">=", since),
            ("question_id", "=", question_id),
        ):
            if value is not None:
                where.append(f"{column} {op} ?")
                args.append(value)
        sql = "SELECT * FROM calls" + (" WHERE " + " AND ".join(where) if where else "")
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            return [dict(r) for r in conn.execute(sql + " ORDER BY id", tuple(args))]

    def info(self) -> dict[str, Any]:
        """Path, size, schema version and row counts of the file (without creating it when missing)."""
        out: dict[str, Any] = {"path": str(self.path), "exists": self.path.exists(), "size_bytes": 0}
        out.update(schema_version=None, responses=0, requests=0, calls=0, first_call=None, last_call=None)
        if not out["exists"]:
            return out
        out["size_bytes"] = self.path.stat().st_size
        with self._connect() as conn:
            out["schema_version"] = schema_version(conn)
            out["responses"] = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            out["requests"] = conn.execute("SELECT COUNT(*) FROM requests").fetchone()[0]
            n, first, last = conn.execute("SELECT COUNT(*), MIN(ts), MAX(ts) FROM calls").fetchone()
        out.update(calls=n, first_call=first, last_call=last)
        return out

    def clear(self, *, responses: bool = True, log: bool = False) -> dict[str, int]:
        """Delete the cached responses and/or the run log (its calls and their stored requests); returns
        how many rows each lost."""
        removed = {"responses": 0, "calls": 0}
        if not self.path.exists() or not (responses or log):
            return removed
        with self._connect() as conn:
            if responses:
                removed["responses"] = conn.execute("DELETE FROM responses").rowcount
            if log:
                removed["calls"] = conn.execute("DELETE FROM calls").rowcount
                conn.execute("DELETE FROM requests")
        return removed


class CachedLLM(LLMBackend):
    """Wraps a backend: serves temperature-0 requests from the cache and logs every call with a link to
    its stored request and the response text."""

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
        namespace = self.backend.cache_namespace()
        key = request.cache_key(namespace)
        cacheable = (
            self.store is not None
            and self.cache_enabled
            and request.temperature == 0
            and getattr(self.backend, "cacheable", True)
        )
        if cacheable:
            assert self.store is not None
            hit = self.store.get(key)
            if hit is not None:
                resp = hit.model_copy(
                    update={
                        "cached": True,
                        "usage": hit.usage.as_cache_hit(),
                        "latency_s": time.perf_counter() - start,
                    }
                )
                self._log(request, key, namespace, resp)
                return resp
        try:
            with _call_slot():
                resp = self.backend.complete(request)
        except ParseError as exc:  # the backend validated its reply itself: tokens were spent
            self._log(request, key, namespace, None, error=_error_text(exc), usage=exc.usage, text=exc.raw)
            raise
        except LLMError as exc:  # infrastructure: the failed call counts, and says which LLM failed
            if exc.usage is None:
                exc.usage = Usage(calls=1)
            if exc.model is None:
                exc.backend, exc.model = self.name, self.model_id
            self._log(request, key, namespace, None, error=_error_text(exc), usage=exc.usage)
            raise
        except Exception as exc:
            self._log(request, key, namespace, None, error=_error_text(exc))
            raise
        if cacheable:
            assert self.store is not None
            self.store.put(key, namespace, request, resp)
        self._log(request, key, namespace, resp)
        return resp

    def record_parse_failure(self) -> None:
        """Log that a response could not be parsed (called by :func:`complete_parsed`)."""
        if self.store is not None and self.log_enabled:
            ctx = current_llm_context()
            self.store.log(
                kind="parse_failure", method=ctx.get("method"), question_id=ctx.get("question_id"),
                stage=ctx.get("stage"), backend=self.name, model=self.model_id,
            )  # fmt: skip

    def _log(
        self,
        request: LLMRequest,
        key: str,
        namespace: str,
        resp: LLMResponse | None,
        *,
        error: str | None = None,
        usage: Usage | None = None,
        text: str | None = None,
    ) -> None:
        if self.store is None or not self.log_enabled:
            return
        ctx = current_llm_context()
        used = resp.usage if resp is not None else (usage or Usage())
        self.store.put_request(key, namespace, request)
        self.store.log(
            method=ctx.get("method"),
            question_id=ctx.get("question_id"),
            stage=ctx.get("stage"),
            backend=self.name,
            model=(resp.model if resp is not None and resp.model else self.model_id),
            request_model=request.model or self.model_id,
            prompt_tokens=used.prompt_tokens,
            completion_tokens=used.completion_tokens,
            latency_s=resp.latency_s if resp is not None else 0.0,
            cached=int(resp.cached) if resp is not None else 0,
            error=error,
            request_key=key,
            response=resp.text if resp is not None else text,
        )

    def __repr__(self) -> str:
        return f"CachedLLM({self.backend!r}, cache={self.cache_enabled})"


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def resolve_llm(
    spec: str | type | LLMBackend,
    *,
    cache: bool = True,
    cache_path: str | None = None,
    log: bool = True,
    **kwargs: Any,
) -> LLMBackend:
    """Resolve ``"openai:gpt-4o-mini"``, ``"llamacpp:smollm2"``, ``"fake"``, ``"replay:FILE.jsonl"``, a class
    or an instance.

    The result is wrapped in :class:`~tkgqa.llm.cache.CachedLLM`, which caches temperature-0 requests
    (unless ``cache=False``) and logs every call (unless ``log=False``) under ``$TKGQA_HOME``.
    """
    if isinstance(spec, CachedLLM):
        return spec
    backend = LLM_BACKENDS.resolve(spec, **kwargs)
    if not callable(getattr(backend, "complete", None)):
        raise ConfigError(f"{spec!r} is not an LLM backend (it has no complete(request) method)")
    return CachedLLM(backend, cache=cache, path=cache_path, log=log)
