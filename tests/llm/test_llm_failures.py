"""LLM failures are errors, never abstentions (issue #12), against the scripted HTTP server answering 500:
the usage of failed attempts travels on the LLMError, methods let it propagate, ``tkgqa eval`` records error
rows, says so and exits 1, a resume retries them, ``tkgqa ask`` exits non-zero. Also: the backend registry
lists every built-in in a fresh interpreter without importing one."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from llm_http_fake import FakeServer, Reply, completion

from cli_run import run_cli
from extras_marks import requires_extra
from tkgqa.errors import ContextWindowError, LLMError
from tkgqa.llm import (
    LLM_BACKENDS,
    CachedLLM,
    LLMBackend,
    LLMRequest,
    LLMResponse,
    Usage,
    charge,
    complete_parsed,
    error_usage,
    error_usage_dict,
    resolve_llm,
)
from tkgqa.llm.base import BUILTIN_BACKENDS
from tkgqa.llm.openai_backend import OpenAIBackend
from tkgqa.llm.parsing import parse_answer_list
from tkgqa.methods import resolve_method
from tkgqa.testing import FakeLLM

DOWN = Reply(status=500, body={"error": {"message": "kaboom"}})


def test_backends_are_listed_without_being_imported() -> None:
    code = """
        import json, sys
        from tkgqa.llm import LLM_BACKENDS
        names = LLM_BACKENDS.names()
        loaded = sorted(m for m in sys.modules if m.endswith("_backend") or m == "tkgqa.testing")
        print(json.dumps({"names": names, "loaded": loaded}))
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"openai", "llamacpp", "fake"} <= set(BUILTIN_BACKENDS) <= set(out["names"])
    assert out["loaded"] == []
    assert LLM_BACKENDS.origin("openai") == "built-in"


class Broken(LLMBackend):
    """Fails every call, as a backend outage."""

    name = "broken"
    model_id = "gpt-4o"

    def complete(self, request: LLMRequest) -> LLMResponse:
        raise LLMError("HTTP 500: kaboom", retryable=True)


class ThenBroken(FakeLLM):
    """Replies with its script, then fails (the server went down mid-question)."""

    def complete(self, request: LLMRequest) -> LLMResponse:
        if len(self.requests) >= len(self._script or []):
            self.requests.append(request)
            raise LLMError("connection reset")
        return super().complete(request)


def test_llm_error_carries_the_usage_of_earlier_attempts(tkgqa_home: Path) -> None:
    llm = ThenBroken(["no list here at all ???"])
    with pytest.raises(LLMError) as info:
        complete_parsed(llm, "Who?", lambda text: parse_answer_list("[" if "???" in text else text))
    usage = info.value.usage
    assert usage is not None and usage.calls == 2 and usage.parse_failures == 1 and usage.prompt_tokens > 0
    cached = resolve_llm(Broken())
    assert isinstance(cached, CachedLLM)
    with pytest.raises(LLMError) as info:
        cached.chat("hi")
    exc = info.value
    assert exc.usage == Usage(calls=1) and (exc.backend, exc.model) == ("broken", "gpt-4o")
    assert error_usage(exc) == Usage(calls=1) and error_usage(LLMError("x")) == Usage(calls=1)
    charge(exc, Usage(calls=2, prompt_tokens=1_000_000))
    assert exc.usage == Usage(calls=3, prompt_tokens=1_000_000)
    assert error_usage_dict(exc)["llm_calls"] == 3 and error_usage_dict(exc)["cost_usd"] > 0
    assert error_usage_dict(ValueError("bug")) == {}


@requires_extra("retrieval")
def test_methods_let_llm_errors_propagate(tkgqa_home: Path, demo_kg: object) -> None:
    from tkgqa.datasets import Question

    q = Question(qid="q", text="Who visited China in November 2014?", answers=["Barack Obama"])
    for spec in ("llm_only", "kg_rag:embedder=lexical", "ari:policy=llm", "cik", "timer4:rewrite=llm"):
        method = resolve_method(spec, llm=Broken())
        with pytest.raises(LLMError, match="kaboom"):
            method.answer(q, demo_kg)  # type: ignore[arg-type]
    # ARI: the steps answered before the outage are charged to the error
    ari = resolve_method(
        "ari:policy=llm", llm=ThenBroken(["$get_head_entity(China, Make a visit, 2014-11)$"])
    )
    with pytest.raises(LLMError) as info:
        ari.answer(q, demo_kg)  # type: ignore[arg-type]
    assert info.value.usage is not None and info.value.usage.calls >= 2


def test_context_window_errors_stay_abstentions(tkgqa_home: Path, demo_kg: object) -> None:
    from tkgqa.datasets import Question

    class TooLong(Broken):
        def complete(self, request: LLMRequest) -> LLMResponse:
            raise ContextWindowError("maximum context length exceeded")

    q = Question(qid="q", text="Who visited China in November 2014?", answers=["Barack Obama"])
    answer = resolve_method("cik", llm=TooLong()).answer(q, demo_kg)  # type: ignore[arg-type]
    assert answer.abstained and "path selection failed" in answer.reason_text  # the paths step hit the limit
    answer = resolve_method("cik:path_policy=lexical", llm=TooLong()).answer(q, demo_kg)  # type: ignore[arg-type]
    assert answer.abstained and "context window" in answer.reason_text


@pytest.fixture
def quick_openai(monkeypatch: pytest.MonkeyPatch, fake_server: FakeServer, tkgqa_home: Path) -> FakeServer:
    """``openai:`` specs talk to the scripted server, with one quick retry instead of four slow ones."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url + "/v1")
    factory = functools.partial(OpenAIBackend, max_retries=1, sleep=lambda _s: None)
    monkeypatch.setitem(LLM_BACKENDS._factories, "openai", factory)
    return fake_server


def test_eval_against_a_failing_server(
    quick_openai: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["eval", "--dataset", "demo", "--method", "kg_rag", "--method-option", "embedder=lexical"]
    args += ["--llm", "openai:gpt-4o-mini", "--limit", "4", "--sample", "first", "--no-progress"]
    args += ["--output", str(out)]
    quick_openai.script(DOWN)
    code, stdout, stderr = run_cli(args, capsys)
    assert code == 1
    assert "4 of 4 questions FAILED" in " ".join(stderr.split()) and "kaboom" in stderr
    report = json.loads((out / "report.json").read_text())
    assert report["errors"] == 4 and report["errors_by_type"] == {"LLMError": 4}
    assert report["metrics"]["answered"] == 0.0 and report["usage"]["llm_calls"] == 4
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["error_type"] == "LLMError" and not r["abstained"] for r in rows)
    assert "gave up after 2 attempts" in rows[0]["error"]
    assert len(quick_openai.requests) == 8  # 4 questions × (1 try + 1 retry)
    # --no-retry-errors keeps them: nothing is sent, still a failing run
    code, _, _ = run_cli([*args, "--no-retry-errors"], capsys)
    assert code == 1 and len(quick_openai.requests) == 8
    # the server is back: the same command retries the error rows and succeeds
    quick_openai.script(Reply(body=completion('["Barack Obama"]')))
    code, stdout, stderr = run_cli([*args, "--json"], capsys)
    assert code == 0 and "FAILED" not in stderr
    report = json.loads(stdout)
    assert report["errors"] == 0 and report["selection"]["retried_errors"] == 4
    assert report["metrics"]["answered"] == 1.0 and report["run_config"]["retry_errors"] is True
    assert len((out / "results.jsonl").read_text().splitlines()) == 4


def test_ask_exits_non_zero_when_the_llm_fails(
    quick_openai: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    quick_openai.script(DOWN)
    args = ["ask", "Who visited China in November 2014?", "--method", "llm_only", "--llm", "openai:m"]
    code, stdout, stderr = run_cli(args, capsys)
    assert code == 2 and "HTTP 500" in stderr and "kaboom" in stderr and "no answer" not in stdout
    quick_openai.script(Reply(body=completion('["Barack Obama"]')))
    code, stdout, _ = run_cli(args, capsys)
    assert code == 0 and "Barack Obama" in stdout
