"""``evaluate(..., executor=ray)`` on a real local Ray cluster (``ray.init(num_cpus=2)``): the same rows
as the local executor (as sets, timing ignored), a worker killed mid-run, every worker killed and the run
resumed."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tkgqa.datasets.base import Question
from tkgqa.datasets.core import load_dataset
from tkgqa.errors import ConfigError, TKGQAError
from tkgqa.eval.executor import ExecutorConfig, ExecutorKind
from tkgqa.eval.executor_ray import ACTOR_PREFIX
from tkgqa.eval.report import RESULTS_FILE
from tkgqa.eval.runner import evaluate
from tkgqa.kg.base import KGStore
from tkgqa.methods.base import Answer, Method
from tkgqa.methods.symbolic import SymbolicReasoner

ray = pytest.importorskip("ray", reason="the distributed extra (ray) is not installed")
pytestmark = pytest.mark.slow

#: Fields that may differ between two runs of the same questions.
TIMING = ("latency_s",)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """One local Ray instance for the module (starting one costs ~10 s)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers get SlowSymbolic by value
    try:
        yield ray
    finally:
        ray.shutdown()


class SlowSymbolic(Method):
    """The symbolic reasoner, ``delay`` seconds slower per question (so that a run can be killed midway)."""

    name = "symbolic"

    def __init__(self, delay: float = 0.0) -> None:
        self.inner = SymbolicReasoner()
        self.config = self.inner.config
        self.delay = delay

    def reason(self, question: Question, kg: KGStore) -> Answer:
        time.sleep(self.delay)
        return self.inner.answer(question, kg)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()


def ray_config(**kw: Any) -> ExecutorConfig:
    return ExecutorConfig(ExecutorKind.RAY, **kw)


def rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / RESULTS_FILE).read_text("utf-8").splitlines() if line.strip()]


def row_set(out: Path) -> set[str]:
    return {json.dumps({k: v for k, v in r.items() if k not in TIMING}, sort_keys=True) for r in rows(out)}


def qids(out: Path) -> list[str]:
    return [str(r["qid"]) for r in rows(out)]


def test_demo_rows_match_the_local_executor(cluster: Any, tmp_path: Path) -> None:
    ds = load_dataset("demo")
    local = evaluate("symbolic", ds, None, tmp_path / "local", progress=False)
    remote = evaluate(
        "symbolic", ds, None, tmp_path / "ray", progress=False, executor=ray_config(workers=2, chunk_size=4)
    )
    assert len(rows(tmp_path / "ray")) == len(ds.questions) == local.n
    assert row_set(tmp_path / "ray") == row_set(tmp_path / "local")
    assert remote.metrics == local.metrics
    assert remote.dataset["kg"] == local.dataset["kg"]


def test_multitq_slice_rows_match_the_local_executor(cluster: Any, shared_data: Path, tmp_path: Path) -> None:
    folder = shared_data / "multitq"
    kg_file, qfile = folder / "kg" / "full_partial.txt", folder / "questions" / "test_gold_sample.json"
    if not (kg_file.is_file() and qfile.is_file()):
        pytest.skip("MultiTQ partial KG or gold sample not in the shared data")
    ds = load_dataset("multitq", folder, questions=qfile)
    common: dict[str, Any] = {"limit": 40, "sample": "stratified", "seed": 3, "progress": False}
    evaluate("symbolic", ds, kg_file, tmp_path / "local", **common)
    evaluate("symbolic", ds, kg_file, tmp_path / "ray", executor=ray_config(workers=2), **common)
    assert len(qids(tmp_path / "ray")) == 40
    assert row_set(tmp_path / "ray") == row_set(tmp_path / "local")


def _run_in_thread(**kw: Any) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def target() -> None:
        try:
            evaluate(**kw)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, errors


def _kill_workers_after(out: Path, n_rows: int, how_many: int, thread: threading.Thread) -> int:
    """Wait until ``n_rows`` rows are written, then kill ``how_many`` of the run's workers; rows written."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and thread.is_alive():
        path = out / RESULTS_FILE
        if path.is_file() and len(path.read_text("utf-8").splitlines()) >= n_rows:
            break
        time.sleep(0.05)
    names = sorted(n for n in ray.util.list_named_actors() if n.startswith(ACTOR_PREFIX))
    assert len(names) >= how_many, (names, thread.is_alive())
    for name in names[:how_many]:
        ray.kill(ray.get_actor(name))
    return len(qids(out))


def test_a_killed_worker_loses_nothing_and_its_questions_are_redone(cluster: Any, tmp_path: Path) -> None:
    ds = load_dataset("demo")
    evaluate("symbolic", ds, None, tmp_path / "local", progress=False)
    out = tmp_path / "ray"
    thread, errors = _run_in_thread(
        method=SlowSymbolic(delay=0.1), dataset_or_questions=ds, kg=None, output_dir=out, progress=False,
        executor=ray_config(workers=2, chunk_size=2), method_factory=functools.partial(SlowSymbolic, 0.1),
    )  # fmt: skip
    written = _kill_workers_after(out, 10, 1, thread)
    thread.join(180)
    assert not thread.is_alive() and not errors, errors
    assert 10 <= written < len(ds.questions)  # killed mid-run
    assert sorted(qids(out)) == sorted(q.qid for q in ds.questions)  # none lost, none twice
    assert row_set(out) == row_set(tmp_path / "local")


def test_all_workers_killed_then_resume_completes(cluster: Any, tmp_path: Path) -> None:
    ds = load_dataset("demo")
    evaluate("symbolic", ds, None, tmp_path / "local", progress=False)
    out = tmp_path / "ray"
    thread, errors = _run_in_thread(
        method=SlowSymbolic(delay=0.1), dataset_or_questions=ds, kg=None, output_dir=out, progress=False,
        executor=ray_config(workers=2, chunk_size=2), method_factory=functools.partial(SlowSymbolic, 0.1),
    )  # fmt: skip
    _kill_workers_after(out, 8, 2, thread)
    thread.join(180)
    assert not thread.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], TKGQAError), errors
    assert "run the same command again" in str(errors[0])
    before = qids(out)
    assert 8 <= len(before) < len(ds.questions) and len(set(before)) == len(before)
    report = evaluate(
        SlowSymbolic(), ds, None, out, progress=False, executor=ray_config(workers=2, chunk_size=4),
        method_factory=SlowSymbolic,
    )  # fmt: skip
    assert report.selection["resumed"] == len(before)
    assert sorted(qids(out)) == sorted(q.qid for q in ds.questions)
    assert row_set(out) == row_set(tmp_path / "local")


def test_global_llm_concurrency_limit_is_shared_by_the_workers(cluster: Any, tmp_path: Path) -> None:
    from tkgqa.eval.executor_ray import CallSlots

    slots = ray.remote(CallSlots).options(num_cpus=0).remote(1)
    ray.get(slots.acquire.remote("w0"))
    waiting = slots.acquire.remote("w1")
    ready, _ = ray.wait([waiting], timeout=0.5)
    assert not ready  # the only slot is held by w0
    ray.get(slots.release_all.remote("w0"))  # e.g. w0 died: its slot comes back
    ray.get(waiting, timeout=30)
    assert ray.get(slots.stats.remote()) == {"peak": 1, "active": 1}


def test_bad_method_on_a_worker_is_a_config_error(cluster: Any, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"invalid|unknown|setting"):
        evaluate(
            "symbolic", load_dataset("demo"), None, tmp_path / "bad", progress=False,
            executor=ray_config(workers=1), method_factory=lambda: SymbolicReasoner(no_such_setting=1),
        )  # fmt: skip


def test_embedding_a_kg_on_ray_fills_the_same_cache_as_locally(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tkgqa.eval.executor_jobs import embed_kg
    from tkgqa.retrieval.cache import EmbeddingCache, text_key
    from tkgqa.retrieval.retriever import FactTable

    texts = FactTable(_demo_kg()).texts
    keys = [text_key(t) for t in texts]
    vectors = {}
    for kind in ("local", "ray"):
        monkeypatch.setenv("TKGQA_HOME", str(tmp_path / kind))
        config = ray_config(workers=2, chunk_size=None) if kind == "ray" else ExecutorConfig()
        summary = embed_kg("demo", "hashing", executor=config, shard_size=64 if kind == "ray" else None)
        assert (summary.facts, summary.embedded, summary.cached) == (len(texts), len(set(keys)), 0)
        found = EmbeddingCache().get_many(summary.embedder, keys)
        vectors[kind] = np.stack([found[k] for k in keys])
    assert np.array_equal(vectors["local"], vectors["ray"])
    again = embed_kg("demo", "hashing", executor=ray_config(workers=2))  # resumes: nothing left to embed
    assert (again.embedded, again.cached) == (0, len(set(keys)))


def _demo_kg() -> KGStore:
    from tkgqa.kg.loaders import load_demo_kg

    return load_demo_kg()


def test_cli_eval_with_ray_then_eval_compare_against_a_local_run(cluster: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    import tkgqa.cli.eval_cmd  # noqa: F401  (registers the commands)
    from tkgqa.cli import app

    runner = CliRunner()
    base = ["eval", "--dataset", "demo", "--method", "symbolic", "--no-progress", "--json", "--output"]
    local = runner.invoke(app, [*base, str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    remote = runner.invoke(app, [*base, str(tmp_path / "ray"), "--executor", "ray", "--workers", "2"])
    assert remote.exit_code == 0, remote.output
    report = json.loads((tmp_path / "ray" / "report.json").read_text("utf-8"))
    assert report["run_config"]["executor"]["kind"] == "ray"
    assert row_set(tmp_path / "ray") == row_set(tmp_path / "local")
    compared = runner.invoke(app, ["eval-compare", str(tmp_path / "local"), str(tmp_path / "ray"), "--json"])
    assert compared.exit_code == 0, compared.output
    result = json.loads(compared.output)
    assert result["n_common"] == len(rows(tmp_path / "local"))
    assert result["a_strict_hits@1"] == result["b_strict_hits@1"]


@contextlib.contextmanager
def _chat_stub(latency: float) -> Iterator[tuple[str, dict[str, int]]]:
    """An OpenAI-compatible endpoint: ``["Paris"]`` after ``latency`` s; counts the requests in flight."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    stats = {"requests": 0, "in_flight": 0, "peak": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                stats["requests"] += 1
                stats["in_flight"] += 1
                stats["peak"] = max(stats["peak"], stats["in_flight"])
            time.sleep(latency)
            with lock:
                stats["in_flight"] -= 1
            message = {"role": "assistant", "content": '["Paris"]'}
            body = json.dumps(
                {"id": "s", "object": "chat.completion", "model": "stub",
                 "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
            ).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", stats
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("limit", "peak"), [(1, 1), (None, 2)])
def test_llm_calls_in_flight_are_bounded_over_all_workers(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int | None, peak: int
) -> None:
    from tkgqa.methods.base import resolve_method

    ds = load_dataset("demo")
    factory = functools.partial(resolve_method, "llm_only", llm="openai:stub")
    with _chat_stub(0.15) as (url, stats):
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stub")
        report = evaluate(
            factory(), ds, None, tmp_path / "run", limit=16, sample="first", progress=False,
            executor=ray_config(workers=2, llm_concurrency=limit, chunk_size=1), method_factory=factory,
        )  # fmt: skip
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert report.n == 16 and report.errors == 0, [r["error"] for r in rows if r.get("error")]
    assert stats["requests"] == 16
    assert stats["peak"] == peak  # one call at a time with the shared limit; both workers at once without


def test_the_driver_reports_what_the_workers_kg_skipped(cluster: Any, tmp_path: Path) -> None:
    """Issue #29: the driver does not load the KG; what the workers' load skipped is still warned about and
    listed in report.json's warnings, as with the local executor."""
    kg_file = tmp_path / "kg.tsv"
    kg_file.write_text("Barack_Obama\tMake_a_visit\tChina\t2014-11-10\nA\tmeet\tB\tNaN\n", "utf-8")
    questions = [Question(qid="q1", text="Who visited China in November 2014?", answers=("Barack Obama",))]
    heard: list[str] = []
    report = evaluate(
        "symbolic", questions, kg_file, tmp_path / "ray", progress=False, warn=heard.append,
        executor=ray_config(workers=1),
    )  # fmt: skip
    skipped = [w for w in report.warnings if "skipped" in w and "NaN" in w]
    assert len(skipped) == 1 and heard.count(skipped[0]) == 1
