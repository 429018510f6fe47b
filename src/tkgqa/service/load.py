"""A small loopback load generator for the service (the CI load test and ``bench/service_load.py``).

:func:`run_load` sends a request mix over ``concurrency`` keep-alive connections (stdlib ``http.client``, one
thread each) and reports requests per second, latency percentiles and status counts.
:func:`starvation_check` parks ``n_pending`` questions on a stalled LLM method, then times ``/health`` and a
symbolic ask while they wait, and finally drops the parked clients and checks that their questions were
cancelled.
"""

from __future__ import annotations

import http.client
import json
import random
import statistics
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

#: (kind, weight) of the default mix: questions to the default (symbolic) method, health checks, entity
#: autocomplete and ARI operator queries.
DEFAULT_MIX = (("ask", 6), ("health", 2), ("entities", 1), ("kg_query", 1))
Request = tuple[str, str, bytes | None]


@dataclass(frozen=True)
class LoadResult:
    """What one load run measured (latencies in milliseconds)."""

    requests: int
    concurrency: int
    seconds: float
    statuses: dict[int, int]
    latencies_ms: list[float] = field(repr=False)
    transport_errors: list[str] = field(default_factory=list)

    @property
    def req_per_s(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        lat = sorted(self.latencies_ms)
        return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "concurrency": self.concurrency,
            "seconds": round(self.seconds, 3),
            "req_per_s": round(self.req_per_s, 1),
            "p50_ms": round(self.percentile(0.50), 2),
            "p99_ms": round(self.percentile(0.99), 2),
            "max_ms": round(max(self.latencies_ms, default=0.0), 2),
            "mean_ms": round(statistics.fmean(self.latencies_ms), 2) if self.latencies_ms else 0.0,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "transport_errors": len(self.transport_errors),
        }


def request_mix(
    n: int,
    questions: Sequence[str],
    *,
    entities: Sequence[str] = ("barack", "angela merkel", "chin", "xi jinping"),
    mix: Sequence[tuple[str, int]] = DEFAULT_MIX,
    seed: int = 0,
) -> list[Request]:
    """``n`` requests ``(method, path, body)`` drawn from ``mix`` with a fixed seed."""
    rng = random.Random(seed)
    kinds = [kind for kind, weight in mix for _ in range(weight)]
    out: list[Request] = []
    for _ in range(n):
        kind = rng.choice(kinds)
        if kind == "ask":
            body = json.dumps({"question": rng.choice(list(questions))}).encode()
            out.append(("POST", "/api/ask", body))
        elif kind == "health":
            out.append(("GET", "/health", None))
        elif kind == "entities":
            out.append(("GET", "/api/entities?" + urlencode({"q": rng.choice(list(entities)), "k": 5}), None))
        else:
            query = {"op": "get_tail_entity", "head": "Barack Obama", "rel": "Make a visit", "time": "2014"}
            out.append(("GET", "/api/kg/query?" + urlencode(query), None))
    return out


def _connection(base_url: str, timeout_s: float) -> http.client.HTTPConnection:
    parts = urlsplit(base_url)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout_s)


def send(
    conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None, headers: dict[str, str]
) -> tuple[int, bytes]:
    """One request on a keep-alive connection: ``(status, body)``."""
    hdrs = dict(headers)
    if body is not None:
        hdrs["Content-Type"] = "application/json"
    conn.request(method, path, body=body, headers=hdrs)
    resp = conn.getresponse()
    return resp.status, resp.read()


def run_load(
    base_url: str,
    requests: Sequence[Request],
    concurrency: int = 16,
    *,
    timeout_s: float = 30.0,
    headers: dict[str, str] | None = None,
) -> LoadResult:
    """Send ``requests`` over ``concurrency`` connections (round-robin split) and time each one."""
    lanes = [list(requests[i::concurrency]) for i in range(concurrency)]
    statuses: Counter[int] = Counter()
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def lane(items: list[Request]) -> None:
        conn = _connection(base_url, timeout_s)
        local: list[tuple[int, float]] = []
        for method, path, body in items:
            t0 = time.perf_counter()
            try:
                status, _ = send(conn, method, path, body, headers or {})
            except (OSError, http.client.HTTPException) as exc:
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}")
                conn.close()
                conn = _connection(base_url, timeout_s)
                continue
            local.append((status, (time.perf_counter() - t0) * 1000))
        conn.close()
        with lock:
            for status, ms in local:
                statuses[status] += 1
                latencies.append(ms)

    threads = [threading.Thread(target=lane, args=(items,), daemon=True) for items in lanes if items]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return LoadResult(
        requests=len(requests),
        concurrency=concurrency,
        seconds=time.perf_counter() - started,
        statuses=dict(statuses),
        latencies_ms=latencies,
        transport_errors=errors,
    )


@dataclass(frozen=True)
class StarvationResult:
    """Latencies (ms) of ``/health`` and a symbolic ask while ``parked`` LLM questions waited."""

    parked: int
    pending_seen: int
    health_ms: list[float]
    ask_ms: list[float]
    ask_statuses: dict[int, int]
    busy_status: int | None
    pending_after_drop: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "parked": self.parked,
            "pending_seen": self.pending_seen,
            "health_max_ms": round(max(self.health_ms, default=0.0), 2),
            "health_p50_ms": round(statistics.median(self.health_ms), 2) if self.health_ms else 0.0,
            "ask_max_ms": round(max(self.ask_ms, default=0.0), 2),
            "ask_p50_ms": round(statistics.median(self.ask_ms), 2) if self.ask_ms else 0.0,
            "ask_statuses": {str(k): v for k, v in self.ask_statuses.items()},
            "busy_status_beyond_queue": self.busy_status,
            "pending_after_clients_left": self.pending_after_drop,
        }


def _pending(base_url: str, headers: dict[str, str]) -> int:
    conn = _connection(base_url, 10)
    try:
        _, body = send(conn, "GET", "/health", None, headers)
        return int(json.loads(body).get("pending", -1))
    finally:
        conn.close()


def starvation_check(
    base_url: str,
    llm_body: dict[str, Any],
    question: str,
    *,
    n_pending: int = 64,
    probes: int = 20,
    queue_limit: int | None = None,
    headers: dict[str, str] | None = None,
    settle_s: float = 20.0,
) -> StarvationResult:
    """Park ``n_pending`` asks with ``llm_body`` (a method on a stalled LLM), time ``probes`` ``/health`` and
    symbolic asks while they wait; with ``queue_limit``, one more LLM ask must get 429. Then close the parked
    connections and read ``pending`` once the server noticed (their queued questions are cancelled)."""
    hdrs = dict(headers or {})
    parked: list[http.client.HTTPConnection] = []
    for _ in range(n_pending):
        conn = _connection(base_url, 60)
        conn.request("POST", "/api/ask", body=json.dumps(llm_body).encode(), headers={
            **hdrs, "Content-Type": "application/json"})  # fmt: skip
        parked.append(conn)
    deadline = time.monotonic() + settle_s
    seen = _pending(base_url, hdrs)
    while seen < n_pending and time.monotonic() < deadline:
        time.sleep(0.05)
        seen = _pending(base_url, hdrs)
    busy_status = None
    if queue_limit is not None and seen >= queue_limit:
        conn = _connection(base_url, 10)
        busy_status, _ = send(conn, "POST", "/api/ask", json.dumps(llm_body).encode(), hdrs)
        conn.close()
    health: list[float] = []
    asks: list[float] = []
    ask_statuses: Counter[int] = Counter()
    conn = _connection(base_url, 30)
    body = json.dumps({"question": question, "method": "symbolic"}).encode()
    for _ in range(probes):
        t0 = time.perf_counter()
        send(conn, "GET", "/health", None, hdrs)
        health.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        status, _ = send(conn, "POST", "/api/ask", body, hdrs)
        asks.append((time.perf_counter() - t0) * 1000)
        ask_statuses[status] += 1
    conn.close()
    for c in parked:  # the clients go away: their queued questions must be cancelled
        c.close()
    after = _pending(base_url, hdrs)
    while after > 1 and time.monotonic() < deadline + settle_s:
        time.sleep(0.05)
        after = _pending(base_url, hdrs)
    return StarvationResult(
        parked=n_pending,
        pending_seen=seen,
        health_ms=health,
        ask_ms=asks,
        ask_statuses=dict(ask_statuses),
        busy_status=busy_status,
        pending_after_drop=after,
    )
