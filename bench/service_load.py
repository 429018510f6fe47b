"""Load and starvation benchmark of ``tkgqa serve`` on 127.0.0.1 (issue #12).

Starts ``tkgqa serve`` (demo KG, default method symbolic, default LLM ``openai:stalled`` pointed at a local
TCP endpoint that accepts and never answers) as a subprocess, then:

1. ``--rounds`` rounds of ``--requests`` requests at ``--concurrency`` (mix: 60 % symbolic asks, 20 %
   ``/health``, 10 % entity autocomplete, 10 % ARI operator queries), printing req/s, p50/p99 latency, the
   status counts and the server's RSS before and after each round;
2. the starvation check: ``--pending`` LLM questions parked on the stalled LLM, then ``/health`` and symbolic
   asks timed while they wait, one more LLM question (expects 429 when ``--pending`` ≥ the queue limit), the
   parked clients dropped (their queued questions must be cancelled);
3. SIGTERM with the LLM questions parked again, timing how long the server takes to exit.

    .venv/bin/python bench/service_load.py [--requests 3000] [--concurrency 16] [--rounds 3] [--pending 64]
    .venv/bin/python bench/service_load.py --kg demo.duckdb --rounds-only   # the demo KG as a DuckDB store
    .venv/bin/python bench/service_load.py --rounds-only --kg ../shared/data/multitq/kg/full_partial.txt \
        --questions ../shared/data/multitq/questions/test_gold_sample.json     # MultiTQ's KG and questions

``--kg`` may be repeated (e.g. a text KG and the same KG as a ``.duckdb``): each round is then run on every
KG in turn, one server at a time, so the req/s of the KGs are measured side by side under the same load.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tkgqa.service.load import request_mix, run_load, starvation_check
from tkgqa.service.queries import demo_examples


def rss_mib(pid: int) -> float:
    """Resident set size of ``pid`` in MiB (from /proc; 0 where unavailable)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def stalled_endpoint() -> tuple[str, socket.socket]:
    """A listener that accepts connections and never answers (kept open by a daemon thread)."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(512)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}", server


def load_questions(path: Path) -> list[str]:
    """The questions of a JSON list (strings, or objects with a ``question``, e.g. MultiTQ's files)."""
    items = json.loads(path.read_text(encoding="utf-8"))
    out = [q if isinstance(q, str) else q.get("question") for q in items] if isinstance(items, list) else []
    questions = [q for q in out if isinstance(q, str) and q.strip()]
    if not questions:
        raise SystemExit(f"{path}: expected a JSON list of questions (strings or objects with 'question')")
    return questions


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pending(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/health")
        return int(json.loads(conn.getresponse().read())["pending"])
    finally:
        conn.close()


def start_server(port: int, llm_url: str, queue_limit: int, kg: str | None = None) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "OPENAI_BASE_URL": llm_url + "/v1",
        "OPENAI_API_KEY": "sk-bench-not-a-real-key",
        "TKGQA_LLM_TIMEOUT": "600",
        "TKGQA_LLM_RETRIES": "0",
    }
    cmd = [sys.executable, "-m", "tkgqa", "serve", "--port", str(port), "--llm", "openai:stalled"]
    cmd += ["--log-level", "warning", "--queue-limit", str(queue_limit), "--request-timeout", "600"]
    if kg is not None:
        cmd += ["--kg", kg]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"tkgqa serve exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            pending(port)
            return proc
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("tkgqa serve did not start within 120 s") from None
            time.sleep(0.2)


def park(port: int, n: int, question: str) -> list[http.client.HTTPConnection]:
    body = json.dumps({"question": question, "method": "llm_only"}).encode()
    conns = []
    for _ in range(n):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("POST", "/api/ask", body=body, headers={"Content-Type": "application/json"})
        conns.append(conn)
    deadline = time.monotonic() + 30
    while pending(port) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    return conns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pending", type=int, default=64)
    ap.add_argument("--queue-limit", type=int, default=64)
    ap.add_argument("--json", action="store_true", help="Print one JSON object at the end.")
    ap.add_argument(
        "--kg",
        action="append",
        help="KG the server loads (default: the demo KG), e.g. a .duckdb; repeat it to compare KGs per round",
    )
    ap.add_argument(
        "--questions",
        type=Path,
        help="JSON list of questions (strings or objects with 'question') asked instead of the demo's",
    )
    ap.add_argument("--rounds-only", action="store_true", help="Skip the starvation and SIGTERM checks.")
    args = ap.parse_args()

    questions = load_questions(args.questions) if args.questions else [e["question"] for e in demo_examples()]
    kgs: list[str | None] = list(args.kg) if args.kg else [None]
    llm_url, listener = stalled_endpoint()
    servers: list[tuple[str | None, int, subprocess.Popen[bytes]]] = []
    out: dict[str, Any] = {
        "rounds": [],
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
    }
    try:
        for kg in kgs:  # every server up (idle ones cost no CPU), then the rounds alternate between them
            port = free_port()
            t0 = time.monotonic()
            servers.append((kg, port, start_server(port, llm_url, args.queue_limit, kg)))
            print(f"server on {kg or 'the demo KG'} up in {time.monotonic() - t0:.1f} s", flush=True)
            run_load(
                f"http://127.0.0.1:{port}", request_mix(200, questions, seed=99), args.concurrency
            )  # warm-up
        for i in range(args.rounds):
            for kg, port, proc in servers:
                before = rss_mib(proc.pid)
                base = f"http://127.0.0.1:{port}"
                result = run_load(base, request_mix(args.requests, questions, seed=i), args.concurrency)
                row = {
                    "kg": kg,
                    **result.to_dict(),
                    "rss_before_mib": round(before, 1),
                    "rss_after_mib": round(rss_mib(proc.pid), 1),
                }
                out["rounds"].append(row)
                print(
                    f"round {i + 1}{f' ({kg})' if len(kgs) > 1 else ''}: {row['requests']} requests at "
                    f"concurrency {row['concurrency']}: {row['req_per_s']} req/s, p50 {row['p50_ms']} ms, "
                    f"p99 {row['p99_ms']} ms, max {row['max_ms']} ms, "
                    f"statuses {row['statuses']}, transport errors {row['transport_errors']}, "
                    f"RSS {row['rss_before_mib']} → {row['rss_after_mib']} MiB",
                    flush=True,
                )
        if len(kgs) > 1:
            for kg in kgs:
                rates = [r["req_per_s"] for r in out["rounds"] if r["kg"] == kg]
                print(f"{kg}: req/s per round {rates}, sum {sum(rates):.1f}", flush=True)
        if args.rounds_only or len(kgs) > 1:  # the checks below run on a single server
            return
        _, port, proc = servers[0]
        base = f"http://127.0.0.1:{port}"
        llm_body = {"question": questions[0], "method": "llm_only"}
        starving = starvation_check(
            base, llm_body, questions[0], n_pending=args.pending, probes=50, queue_limit=args.queue_limit
        )
        out["starvation"] = starving.to_dict()
        print(f"starvation check: {json.dumps(out['starvation'])}", flush=True)
        parked = park(port, min(args.pending, args.queue_limit), questions[0])
        waiting = pending(port)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        out["sigterm"] = {"pending_at_signal": waiting, "exit_s": round(time.monotonic() - started, 2)}
        for conn in parked:
            conn.close()
        print(
            f"SIGTERM with {waiting} LLM questions pending: exited in {out['sigterm']['exit_s']} s",
            flush=True,
        )
    finally:
        for _, _, proc in servers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        listener.close()
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
