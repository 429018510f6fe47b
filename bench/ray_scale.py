"""Wall time of the local executor vs Ray with 1 and 2 workers, side by side in one run.

    nice -n 10 .venv/bin/python bench/ray_scale.py [--questions 300] [--big 3000] [--llm-questions 120]
        [--latency 0.2] [--embed-facts 3000] [--hash-facts 0] [--only a|b|c] [--json OUT.json]

(a) the symbolic method on MultiTQ (gold sample; ``--big`` more from the unanswered test questions),
(b) the ``llm_only`` baseline against an OpenAI-compatible stub served by this script (``--latency`` seconds
    per reply; it counts the requests in flight, so the bounded-concurrency row shows the limit holding),
(c) ``tkgqa kg embed``'s job: the MultiTQ KG (``--hash-facts`` first facts; 0 = all 227k) with the hashing
    embedder, and the first ``--embed-facts`` facts with MiniLM (when installed); flat index.

Ray is started once (``ray.init(num_cpus=2)``, its start-up time reported on its own, as a real cluster is
already up); every Ray row includes starting its workers (actor + KG load + method build). Each row gets a
fresh ``TKGQA_HOME`` so no LLM reply or embedding is served from a cache. Needs ``/work/shared/data``
(``TKGQA_SHARED_DATA``) and the ``distributed`` extra.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tkgqa.datasets.core import load_dataset
from tkgqa.eval.executor import ExecutorConfig, ExecutorKind
from tkgqa.eval.executor_jobs import embed_kg
from tkgqa.eval.runner import evaluate
from tkgqa.methods.base import resolve_method

ROOT = Path(__file__).resolve().parents[1]


def shared_data() -> Path:
    env = os.environ.get("TKGQA_SHARED_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data"


@contextlib.contextmanager
def llm_stub(latency: float) -> Iterator[tuple[str, dict[str, int]]]:
    """An OpenAI-compatible chat endpoint answering ``["Iraq"]`` after ``latency`` s; yields its base URL and
    counters (``requests``, ``peak`` in flight)."""
    stats = {"requests": 0, "in_flight": 0, "peak": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                stats["requests"] += 1
                stats["in_flight"] += 1
                stats["peak"] = max(stats["peak"], stats["in_flight"])
            try:
                time.sleep(latency)
                body = json.dumps(
                    {
                        "id": "stub", "object": "chat.completion", "model": "stub-model",
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": '["Iraq"]'},
                             "finish_reason": "stop"}
                        ],
                        "usage": {"prompt_tokens": 40, "completion_tokens": 4},
                    }
                ).encode()  # fmt: skip
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            finally:
                with lock:
                    stats["in_flight"] -= 1

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", stats
    finally:
        server.shutdown()
        server.server_close()


def executors(extra: list[tuple[str, ExecutorConfig]] | None = None) -> list[tuple[str, ExecutorConfig]]:
    rows = [
        ("local", ExecutorConfig()),
        ("ray, 1 worker", ExecutorConfig(ExecutorKind.RAY, workers=1)),
        ("ray, 2 workers", ExecutorConfig(ExecutorKind.RAY, workers=2)),
    ]
    return rows + (extra or [])


def fresh_home(tmp: Path, name: str) -> None:
    home = tmp / "home" / name.replace(" ", "_").replace(",", "").replace("=", "")
    os.environ["TKGQA_HOME"] = str(home)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def bench_symbolic(tmp: Path, data: Path, n: int, big: int) -> list[dict[str, Any]]:
    folder = data / "multitq"
    kg_file = folder / "kg" / "full_partial.txt"
    out: list[dict[str, Any]] = []
    sets = [("gold sample", folder / "questions" / "test_gold_sample.json", n)]
    if big:
        sets.append(("test (no answers)", folder / "questions" / "test_questions_no_answers.json", big))
    for label, qfile, limit in sets:
        ds = load_dataset("multitq", folder, questions=qfile)
        for name, config in executors():
            fresh_home(tmp, f"sym-{label}-{name}")
            run = functools.partial(
                evaluate, "symbolic", ds, kg_file, tmp / f"sym-{label}-{name}", limit=limit, sample="first",
                progress=False, executor=config,
            )  # fmt: skip
            wall, report = timed(run)
            hits = round(report.metrics["strict_hits@1"], 4)
            out.append({"job": f"(a) symbolic, MultiTQ {label}", "n": report.n, "executor": name,
                        "wall_s": round(wall, 2), "hits@1": hits})  # fmt: skip
            print(out[-1], flush=True)
    return out


def bench_llm(tmp: Path, data: Path, n: int, latency: float) -> list[dict[str, Any]]:
    folder = data / "multitq"
    ds = load_dataset("multitq", folder, questions=folder / "questions" / "test_gold_sample.json")
    kg_file = folder / "kg" / "full_partial.txt"
    out: list[dict[str, Any]] = []
    factory = functools.partial(resolve_method, "llm_only", llm="openai:stub-model")
    bounded = [
        ("ray, 4 workers (0.5 CPU each)", ExecutorConfig(ExecutorKind.RAY, workers=4)),
        (
            "ray, 4 workers, --llm-concurrency 2",
            ExecutorConfig(ExecutorKind.RAY, workers=4, llm_concurrency=2),
        ),
    ]
    with llm_stub(latency) as (url, stats):
        os.environ["OPENAI_BASE_URL"] = url
        os.environ["OPENAI_API_KEY"] = "sk-bench-stub-not-a-key"
        for name, config in executors(bounded):
            fresh_home(tmp, f"llm-{name}")
            stats.update(requests=0, peak=0)
            run = functools.partial(
                evaluate, factory(), ds, kg_file, tmp / f"llm-{name}", limit=n, sample="first",
                progress=False, executor=config, method_factory=factory,
            )  # fmt: skip
            wall, report = timed(run)
            out.append({"job": f"(b) llm_only vs stub ({latency * 1000:.0f} ms)", "n": report.n,
                        "executor": name, "wall_s": round(wall, 2), "llm_requests": stats["requests"],
                        "peak_in_flight": stats["peak"], "errors": report.errors})  # fmt: skip
            print(out[-1], flush=True)
    return out


def kg_slice(tmp: Path, kg_file: Path, n_facts: int) -> Path:
    """The first ``n_facts`` lines of ``kg_file`` in a temporary file (``0``: the file itself)."""
    if not n_facts:
        return kg_file
    part = tmp / f"multitq_first_{n_facts}.txt"
    with kg_file.open(encoding="utf-8") as src, part.open("w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i >= n_facts:
                break
            dst.write(line)
    return part


def bench_embed(tmp: Path, data: Path, hash_facts: int, minilm_facts: int) -> list[dict[str, Any]]:
    kg_file = data / "multitq" / "kg" / "full_partial.txt"
    out: list[dict[str, Any]] = []
    label = f"first {hash_facts} facts" if hash_facts else "whole KG"
    jobs: list[tuple[str, Path, str]] = [(f"hashing, {label}", kg_slice(tmp, kg_file, hash_facts), "hashing")]
    try:
        from tkgqa.retrieval.embedders import resolve_embedder

        resolve_embedder("minilm").dim  # noqa: B018 - loads the model: skip the row when it is not installed
        jobs.append((f"minilm, first {minilm_facts} facts", kg_slice(tmp, kg_file, minilm_facts), "minilm"))
    except Exception as exc:
        print(f"minilm row skipped: {exc}", file=sys.stderr)
    for label, path, embedder in jobs:
        for name, config in executors():
            fresh_home(tmp, f"emb-{label}-{name}")
            run = functools.partial(embed_kg, path, embedder, executor=config, index_kind="flat")
            wall, summary = timed(run)
            out.append({"job": f"(c) embed KG: {label}", "n": summary.facts, "executor": name,
                        "wall_s": round(wall, 2), "embedded": summary.embedded,
                        "prepare_s": summary.prepare_s, "embed_s": summary.embed_s,
                        "index_s": summary.index_s})  # fmt: skip
            print(out[-1], flush=True)
    return out


def bench_startup(tmp: Path, data: Path) -> list[dict[str, Any]]:
    """Starting the eval workers alone (process + method build + KG open, no npz cache): the fixed cost in
    every Ray row of (a) and (b)."""
    import ray

    from tkgqa.eval.executor_ray import EvalWorker

    kg_file = str(data / "multitq" / "kg" / "full_partial.txt")
    out: list[dict[str, Any]] = []
    factory = functools.partial(resolve_method, "symbolic")
    for n in (1, 2):
        fresh_home(tmp, f"start-{n}")
        for cache in ("cold", "warm"):  # warm: the KG's npz cache written by the cold start
            remote: Any = ray.remote(EvalWorker).options(
                num_cpus=1, runtime_env={"env_vars": {"TKGQA_HOME": os.environ["TKGQA_HOME"]}}
            )
            start = time.perf_counter()
            actors: list[Any] = [remote.remote(factory, kg_file, True, None, f"w{i}") for i in range(n)]
            ray.get([a.ready.remote() for a in actors])
            wall = time.perf_counter() - start
            for a in actors:
                ray.kill(a)
            out.append({"job": f"start eval workers (MultiTQ KG, symbolic), {cache} KG cache", "n": n,
                        "executor": f"ray, {n} workers", "wall_s": round(wall, 2)})  # fmt: skip
            print(out[-1], flush=True)
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| job | n | executor | wall s | vs local | notes |", "|---|---|---|---|---|---|"]
    local: dict[str, float] = {}
    for r in rows:
        if r["executor"] == "local":
            local[r["job"]] = r["wall_s"]
        base = local.get(r["job"])
        ratio = f"{r['wall_s'] / base:.2f}×" if base else "—"
        notes = ", ".join(f"{k}={v}" for k, v in r.items() if k not in {"job", "n", "executor", "wall_s"})
        lines.append(f"| {r['job']} | {r['n']} | {r['executor']} | {r['wall_s']:.2f} | {ratio} | {notes} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--big", type=int, default=3000)
    parser.add_argument("--llm-questions", type=int, default=120)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--embed-facts", type=int, default=3000, help="MiniLM slice")
    parser.add_argument("--hash-facts", type=int, default=0, help="hashing slice (0: the whole KG)")
    parser.add_argument("--only", choices=["a", "b", "c"], action="append")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    data = shared_data()
    if not (data / "multitq" / "kg" / "full_partial.txt").is_file():
        sys.exit(f"MultiTQ not found under {data}: set TKGQA_SHARED_DATA")
    import ray

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    start_s, _ = timed(lambda: ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                                        configure_logging=False))  # fmt: skip
    only = set(args.only or ["a", "b", "c"])
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ray_scale_") as tmp_name:
        tmp = Path(tmp_name)
        if "a" in only:
            rows += bench_startup(tmp, data)
            rows += bench_symbolic(tmp, data, args.questions, args.big)
        if "b" in only:
            rows += bench_llm(tmp, data, args.llm_questions, args.latency)
        if "c" in only:
            rows += bench_embed(tmp, data, args.hash_facts, args.embed_facts)
    ray.shutdown()
    print(f"\nray.init(num_cpus=2): {start_s:.1f} s (not in the rows); {os.cpu_count()} CPUs, "
          f"{platform.python_version()}, ray {ray.__version__}\n")  # fmt: skip
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps({"ray_init_s": start_s, "rows": rows}, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
