"""One cost rule (:func:`usage_cost`): ``report.json`` and ``tkgqa llm log`` agree, cache hits included."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from llm_http_fake import FakeServer, Reply, completion
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.datasets import Question
from tkgqa.errors import LLMError, ParseError
from tkgqa.eval import evaluate
from tkgqa.llm import (
    LLMCache,
    Usage,
    complete_parsed,
    error_usage,
    llm_context,
    make_request,
    resolve_llm,
    resolve_llm_arg,
    summarize_log,
    usage_cost,
    usage_dict,
)
from tkgqa.llm.openai_backend import OpenAIBackend
from tkgqa.methods.baselines.llm_only import LLMOnly
from tkgqa.testing import FakeLLM

_load_commands()
runner = CliRunner()
MINI = (0.15, 0.60)  # gpt-4o-mini, USD per 1M tokens


def test_the_cost_rule() -> None:
    fresh = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000, calls=1)
    assert usage_cost(fresh, "gpt-4o-mini", backend="openai") == pytest.approx(sum(MINI))
    hit = fresh.as_cache_hit()
    assert (hit.calls, hit.cached_calls, hit.fresh_calls, hit.prompt_tokens) == (1, 1, 0, 1_000_000)
    assert usage_cost(hit, "gpt-4o-mini", backend="openai") == 0.0  # tokens reported, not paid
    both = fresh + hit
    assert (both.calls, both.cached_calls, both.prompt_tokens) == (2, 1, 2_000_000)
    assert usage_cost(both, "gpt-4o-mini", backend="openai") == pytest.approx(sum(MINI))
    assert usage_cost(fresh, "gpt-4o-mini", backend="llamacpp") == 0.0  # local
    assert usage_cost(fresh, "my-model", backend="openai") == 0.0  # unpriced
    assert usage_cost(fresh, "my-model", backend="openai", prices={"my": (1.0, 1.0)}) == pytest.approx(2.0)


def test_usage_dict_and_error_usage(tkgqa_home: Path) -> None:
    remote = OpenAIBackend("gpt-4o-mini", base_url="http://127.0.0.1:9")
    usage = (
        Usage(prompt_tokens=2_000_000, completion_tokens=0, calls=2)
        + Usage(prompt_tokens=1_000_000, calls=1).as_cache_hit()
    )
    out = usage_dict(usage, remote)
    assert out == {
        "llm_calls": 3,
        "cached_calls": 1,
        "prompt_tokens": 3_000_000,
        "completion_tokens": 0,
        "parse_failures": 0,
        "cost_usd": pytest.approx(0.30),
    }
    assert (
        usage_dict(usage)["cost_usd"] == 0.0 and usage_dict(usage, FakeLLM(model="gpt-4o"))["cost_usd"] == 0
    )
    assert error_usage(LLMError("down")) == Usage(calls=1)
    assert error_usage(ParseError("bad")) == Usage(parse_failures=1)
    carried = Usage(calls=2, parse_failures=2, prompt_tokens=5)
    assert error_usage(ParseError("bad", usage=carried)) is carried
    assert resolve_llm_arg(None) is None and resolve_llm_arg(remote) is remote
    assert resolve_llm_arg("fake").name == "fake"  # type: ignore[union-attr]


def test_backend_rejected_reply_counts_its_tokens(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(
        Reply(
            body=completion("Marseille", prompt_tokens=1_000_000, completion_tokens=0, model="gpt-4o-mini")
        ),
        Reply(body=completion("Paris", prompt_tokens=1_000_000, completion_tokens=0, model="gpt-4o-mini")),
    )
    llm = resolve_llm(OpenAIBackend("gpt-4o-mini", base_url=fake_server.url))
    with llm_context(method="m", question_id="q"):
        out = complete_parsed(llm, "Capital?", str.strip, choices=["Paris", "Lyon"])
    assert out.value == "Paris" and out.usage.calls == 2 and out.usage.parse_failures == 1
    log = summarize_log(method="m").total
    assert (log.calls, log.errors, log.parse_failures, log.prompt_tokens) == (2, 1, 1, 2_000_000)
    assert log.cost_usd == pytest.approx(usage_dict(out.usage, llm)["cost_usd"]) == pytest.approx(0.30)


def test_rows_are_priced_by_the_model_asked_for(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(
        Reply(body=completion("ok", prompt_tokens=1_000_000, completion_tokens=0, model="srv"))
    )
    llm = resolve_llm(OpenAIBackend("gpt-4o-mini", base_url=fake_server.url))
    resp = llm.complete(make_request("hi"))
    row = LLMCache().calls()[-1]
    assert (row["model"], row["request_model"]) == ("srv", "gpt-4o-mini")
    summary = summarize_log()
    assert summary.total.cost_usd == pytest.approx(0.15) == usage_dict(resp.usage, llm)["cost_usd"]
    assert summary.unpriced_models == [] and summary.by_model[0].key == "srv"


# --- report.json and tkgqa llm log agree --------------------------------------------------------------------
QUESTIONS = [
    Question(qid=f"q{i}", text=f"Which country did visitor {i} visit in 2005?", answers=["Iraq"])
    for i in range(3)
]


def run_eval(server: FakeServer, out: Path) -> dict[str, Any]:
    method = LLMOnly(llm=resolve_llm(OpenAIBackend("gpt-4o-mini", base_url=server.url, api_key="sk-eval")))
    evaluate(method, QUESTIONS, None, out, progress=False, check_support=False)
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report["usage"]


def log_total(since: float) -> dict[str, Any]:
    iso = datetime.fromtimestamp(since).isoformat()
    result = runner.invoke(app, ["llm", "log", "--json", "--method", "llm_only", "--since", iso])
    assert result.exit_code == 0, result.output
    total: dict[str, Any] = json.loads(result.stdout)["total"]
    return total


def test_report_and_llm_log_agree_across_a_cached_rerun(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(
        Reply(
            body=completion(
                '["Iraq"]', prompt_tokens=40_000, completion_tokens=5_000, model="gpt-4o-mini-2024"
            )
        )
    )
    t0 = time.time()
    first = run_eval(fake_server, tkgqa_home / "run1")
    t1 = time.time()
    second = run_eval(fake_server, tkgqa_home / "run2")  # every call is a cache hit
    assert len(fake_server.requests) == 3
    both, rerun = log_total(t0), log_total(t1)

    expected_cost = 3 * (40_000 * MINI[0] + 5_000 * MINI[1]) / 1e6
    assert first["cost_usd"] == pytest.approx(expected_cost) and second["cost_usd"] == 0.0
    assert (first["llm_calls"], first["cached_calls"], second["llm_calls"], second["cached_calls"]) == (
        3,
        0,
        3,
        3,
    )
    assert second["prompt_tokens_per_question"] == first["prompt_tokens_per_question"] == 40_000

    assert rerun["cost_usd"] == second["cost_usd"] == 0.0
    assert (rerun["calls"], rerun["cached_calls"]) == (second["llm_calls"], second["cached_calls"])
    assert rerun["prompt_tokens"] == second["prompt_tokens_per_question"] * len(QUESTIONS)
    assert both["cost_usd"] == pytest.approx(first["cost_usd"] + second["cost_usd"])
    assert both["calls"] == first["llm_calls"] + second["llm_calls"] == 6
    assert both["cached_calls"] == first["cached_calls"] + second["cached_calls"] == 3
    assert b"sk-eval" not in (tkgqa_home / "llm.sqlite").read_bytes()
