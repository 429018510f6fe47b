"""FakeLLM, the cache layer, the run log, usage summaries, complete_parsed and resolve_llm."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tkgqa.errors import ConfigError, LLMError, ParseError
from tkgqa.llm import (
    CachedLLM,
    LLMRequest,
    Message,
    Usage,
    complete_many,
    complete_parsed,
    extract_json_object,
    llm_context,
    make_request,
    resolve_llm,
    usage_summary,
)
from tkgqa.llm.openai_backend import OpenAIBackend
from tkgqa.prompts import Prompt, run_prompt
from tkgqa.testing import FakeLLM


def req(text: str = "hi", **kw: object) -> LLMRequest:
    return make_request(text, **kw)  # type: ignore[arg-type]


def test_fake_records_requests_and_counts_tokens() -> None:
    fake = FakeLLM(["one two three"])
    resp = fake.complete(req("hello there"))
    assert resp.text == "one two three"
    assert fake.requests[0].messages[0].content == "hello there"
    assert resp.usage.calls == 1 and resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0


def test_fake_runs_out_with_clear_error() -> None:
    fake = FakeLLM(["only"])
    fake.complete(req())
    with pytest.raises(LLMError, match="ran out of scripted responses: 1 given, call #2"):
        fake.complete(req("again"))


def test_fake_callable_and_default() -> None:
    assert FakeLLM(lambda r: r.messages[-1].content.upper()).complete(req("abc")).text == "ABC"
    assert FakeLLM().complete(req(choices=["x", "y"])).text == "x"


def test_cache_hit_second_request_not_sent(tkgqa_home: Path) -> None:
    fake = FakeLLM(["answer"])
    llm = resolve_llm(fake)
    first = llm.complete(req("q"))
    second = llm.complete(req("q"))
    assert (first.cached, second.cached) == (False, True)
    assert second.text == "answer" and len(fake.requests) == 1
    assert second.usage.cached_calls == 1
    assert (tkgqa_home / "llm.sqlite").is_file()


def test_cache_skipped_for_temperature_and_when_disabled(tkgqa_home: Path) -> None:
    fake = FakeLLM(["a", "b"])
    llm = resolve_llm(fake)
    assert [llm.complete(req("q", temperature=0.7)).cached for _ in range(2)] == [False, False]
    assert len(fake.requests) == 2
    fake2 = FakeLLM(["a", "b"])
    off = resolve_llm(fake2, cache=False)
    assert [off.complete(req("q")).text for _ in range(2)] == ["a", "b"]
    rows = sqlite3.connect(tkgqa_home / "llm.sqlite").execute("SELECT COUNT(*) FROM calls").fetchone()
    assert rows[0] == 4  # calls are still logged


def test_cache_key_ignores_api_keys_and_secret_extras() -> None:
    a = OpenAIBackend("gpt-4o-mini", base_url="http://h:1/v1", api_key="sk-AAA")
    b = OpenAIBackend("gpt-4o-mini", base_url="http://user:pw@h:1/v1?x=1", api_key="sk-BBB")
    assert a.cache_namespace() == b.cache_namespace() == "openai:gpt-4o-mini@http://h:1/v1"
    r1 = req("q", extra={"api_key": "sk-AAA", "top_p": 1})
    r2 = req("q", extra={"api_key": "sk-BBB", "top_p": 1})
    assert r1.cache_key(a.cache_namespace()) == r2.cache_key(b.cache_namespace())
    assert r1.cache_key("x") != req("q", extra={"top_p": 0.5}).cache_key("x")
    assert r1.cache_key("x") != r1.cache_key("y")


class PricedFake(FakeLLM):
    """A FakeLLM priced like a remote backend (``fake`` itself is a local backend, hence free)."""

    name = "fake-remote"


def test_run_log_rows_and_usage_summary(tkgqa_home: Path) -> None:
    llm = resolve_llm(PricedFake(lambda r: "the answer", model="gpt-4o-mini"))
    with llm_context(method="ari", question_id="q1"):
        llm.complete(req("first"))
        llm.complete(req("first"))  # cached
        with llm_context(question_id="q2"):
            llm.complete(req("second"))
    llm.complete(req("untagged"))
    summary = usage_summary()
    by_q = {(r.method, r.question_id): r for r in summary.rows}
    q1 = by_q[("ari", "q1")]
    assert (q1.calls, q1.cached_calls) == (2, 1)
    assert q1.prompt_tokens > 0 and q1.cost_usd > 0
    assert by_q[("ari", "q2")].calls == 1
    assert (None, None) in by_q
    assert summary.total.calls == 4
    single = by_q[("ari", "q2")]
    assert q1.cost_usd == pytest.approx(single.cost_usd)  # the cached call cost nothing
    assert usage_summary(method="ari").total.calls == 3
    local = resolve_llm(FakeLLM(lambda r: "free", model="gpt-4o-mini"))
    with llm_context(method="local"):
        local.complete(req("third"))
    assert usage_summary(method="local").total.cost_usd == 0.0  # same model name, local backend


def test_usage_is_addable() -> None:
    total = Usage(prompt_tokens=1, calls=1) + Usage(completion_tokens=2, calls=1, cached_calls=1)
    assert (total.prompt_tokens, total.completion_tokens, total.calls, total.cached_calls) == (1, 2, 2, 1)
    assert total.total_tokens == 3


def test_complete_parsed_retries_with_error_then_succeeds(tkgqa_home: Path) -> None:
    fake = FakeLLM(["no json here", 'Sure: {"a": 1}'])
    llm = resolve_llm(fake)
    with llm_context(method="m", question_id="q"):
        out = complete_parsed(llm, "give json", extract_json_object)
    assert out.value == {"a": 1} and out.attempts == 2
    assert out.usage.parse_failures == 1 and out.usage.calls == 2
    retry_msgs = fake.requests[1].messages
    assert retry_msgs[1] == Message.assistant("no json here")
    assert "could not be parsed" in retry_msgs[2].content
    assert usage_summary().total.parse_failures == 1


def test_complete_parsed_raises_with_raw_text(tkgqa_home: Path) -> None:
    llm = resolve_llm(FakeLLM(["bad one", "bad two"]))
    with pytest.raises(ParseError) as info:
        complete_parsed(llm, "give json", extract_json_object, retries=1)
    assert info.value.raw == "bad two"
    assert info.value.usage is not None and info.value.usage.parse_failures == 2
    assert info.value.usage.calls == 2 and info.value.usage.prompt_tokens > 0


def test_resolve_llm_strings_classes_instances(tkgqa_home: Path) -> None:
    assert isinstance(resolve_llm("fake"), CachedLLM)
    named = resolve_llm("fake:my-model")
    assert named.model_id == "my-model"
    by_class = resolve_llm(FakeLLM, responses=["r"])
    assert by_class.complete(req()).text == "r"
    inst = FakeLLM(["s"])
    wrapped = resolve_llm(inst)
    assert isinstance(wrapped, CachedLLM) and wrapped.backend is inst
    assert resolve_llm(wrapped) is wrapped
    openai = resolve_llm("openai:gpt-4o-mini", cache=False)
    assert openai.model_id == "gpt-4o-mini"


def test_resolve_unknown_lists_known() -> None:
    # plugins installed through the tkgqa.llm_backends entry points may add names to the list
    with pytest.raises(
        ConfigError, match=r"unknown LLM backend 'nope'; known: (.*, )?fake, llamacpp, openai"
    ):
        resolve_llm("nope:x")
    with pytest.raises(ConfigError, match="not an LLM backend"):
        resolve_llm(object())  # type: ignore[arg-type]


def test_tkgqa_home_read_at_call_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "late"))
    resolve_llm(FakeLLM(["x"])).complete(req())
    assert (tmp_path / "late" / "llm.sqlite").is_file()


def test_complete_many_keeps_order_and_context(tkgqa_home: Path) -> None:
    llm = resolve_llm(FakeLLM(lambda r: r.messages[0].content * 2))
    with llm_context(method="batch", question_id="qb"):
        out = complete_many(llm, [req(str(i)) for i in range(8)], max_workers=4)
    assert [o.text for o in out] == [str(i) * 2 for i in range(8)]
    assert usage_summary(method="batch").total.calls == 8


def test_errors_are_logged(tkgqa_home: Path) -> None:
    llm = resolve_llm(FakeLLM([]))
    with pytest.raises(LLMError):
        llm.complete(req())
    assert usage_summary().total.errors == 1


def test_prompt_convention(tkgqa_home: Path) -> None:
    prompt = Prompt(
        name="echo",
        builder=lambda ctx: [Message.system("Be brief."), Message.user(ctx["question"])],
        parser=str.strip,
    )
    out = run_prompt(resolve_llm(FakeLLM(["  Paris "])), prompt, {"question": "Capital?"})
    assert out.value == "Paris"
